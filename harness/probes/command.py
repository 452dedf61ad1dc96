"""Any command: value is its exit code, text is what it printed."""

from ..params import Param
from .base import Probe, Reading, output


class Command(Probe):
    kind = "command"
    UPSTREAM_TEXT = True
    ARGS = {"cmd": Param(str, help="shell command run as root")}

    def command(self, ctx=None) -> str:
        return self.args["cmd"]

    def parse(self, result) -> Reading:
        return Reading(result.exit_code, output(result))
