"""Files on the machine."""

from ..params import Param
from .base import Probe, Reading, output, q


class FileExists(Probe):
    kind = "file-exists"
    ARGS = {"path": Param(str)}

    def command(self, ctx=None) -> str:
        return f"if test -e {q(self.args['path'])}; then echo present; else echo absent; fi"

    def parse(self, result) -> Reading:
        """`present` or `absent`."""
        return Reading(result.stdout.strip() == "present", result.stdout.strip())


class FileContent(Probe):
    kind = "file-content"
    UPSTREAM_TEXT = True
    ARGS = {"path": Param(str)}

    def command(self, ctx=None) -> str:
        return f"cat {q(self.args['path'])}"

    def parse(self, result) -> Reading:
        """The file verbatim; value None when it cannot be read, e.g.
        `cat: /etc/modules-load.d/k8s.conf: No such file or directory` (exit 1)."""
        return Reading(result.stdout if result.ok else None, output(result))
