"""systemd units and their journal."""

import time

from ..params import Param
from .base import Context, Probe, Reading, output, q


class UnitState(Probe):
    kind = "unit-state"
    ARGS = {"unit": Param(str)}

    def command(self, ctx=None) -> str:
        return f"systemctl show -p ActiveState -p SubState -p NRestarts -p ExecMainStatus {q(self.args['unit'])}"

    def parse(self, result) -> Reading:
        """`systemctl show` properties, one per line:
        `NRestarts=0` `ExecMainStatus=0` `ActiveState=active` `SubState=running`.
        Value is ActiveState (`active`, `failed`, `activating`, ...)."""
        props = dict(l.split("=", 1) for l in result.stdout.splitlines() if "=" in l)
        return Reading(props.get("ActiveState"), output(result))


class Journal(Probe):
    kind = "journal"
    UPSTREAM_TEXT = True
    ARGS = {"unit": Param(str), "lines": Param(int, required=False, default=2000)}

    def command(self, ctx: Context = Context()) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ctx.since)) if ctx.since else None
        since_opt = f" --since {q(since + ' UTC')}" if since else ""
        return f"journalctl --no-pager -o short-iso -u {q(self.args['unit'])}{since_opt} -n {int(self.args['lines'])}"

    def parse(self, result) -> Reading:
        """journalctl -o short-iso lines, e.g.
        `2026-11-30T21:40:02+0000 node1 containerd[412]: time="..." level=info msg="starting containerd" ...`
        Value is the number of lines read."""
        lines = [l for l in result.stdout.splitlines() if not l.startswith("-- ")]
        return Reading(len(lines), "\n".join(lines))
