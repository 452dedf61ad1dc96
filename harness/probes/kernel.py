"""Kernel state: sysctls, loaded modules, active swap."""

from ..params import Param
from .base import Probe, Reading, output, q


class Sysctl(Probe):
    kind = "sysctl"
    ARGS = {"key": Param(str, help="e.g. net.ipv4.ip_forward")}

    def command(self, ctx=None) -> str:
        return f"sysctl {q(self.args['key'])}"

    def parse(self, result) -> Reading:
        """`net.ipv4.ip_forward = 0`, or for a key whose module is not loaded (exit 255):
        `sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory`.
        Value is the value as a string, None when the key does not exist."""
        value = None
        if result.ok:
            _, sep, rest = result.stdout.strip().partition(" = ")
            value = rest.strip() if sep else result.stdout.strip()
        return Reading(value, output(result))


class ModuleLoaded(Probe):
    kind = "module-loaded"
    ARGS = {"module": Param(str)}

    def command(self, ctx=None) -> str:
        return "cat /proc/modules"

    def parse(self, result) -> Reading:
        """/proc/modules, one module per line:
        `br_netfilter 36864 0 - Live 0x0000000000000000`
        `bridge 401408 1 br_netfilter, Live 0x0000000000000000`"""
        want = self.args["module"].replace("-", "_")
        lines = [l for l in result.stdout.splitlines() if l.split(" ", 1)[0] == want]
        return Reading(bool(lines), "\n".join(lines))


class Swaps(Probe):
    kind = "swaps"
    ARGS = {}

    def command(self, ctx=None) -> str:
        return "cat /proc/swaps"

    def parse(self, result) -> Reading:
        """/proc/swaps: a header, then one active swap area per line:
        `Filename                                Type            Size            Used            Priority`
        `/swapfile.kubelab                       file            262140          0               -2`
        Value is the list of active swap areas."""
        areas = [l.split()[0] for l in result.stdout.splitlines()[1:] if l.strip()]
        return Reading(areas, output(result))

    def describe(self) -> str:
        return "swaps"
