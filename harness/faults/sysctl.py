"""A kernel parameter at a value Kubernetes cannot work with."""

from ..params import Param
from ..probes.base import q
from .base import Fault, check


class SysctlValue(Fault):
    kind = "sysctl-value"
    summary = "a sysctl set to a bad value at run time; recover() persists the good one in sysctl.d"
    PARAMS = {
        "key": Param(str, help="e.g. net.ipv4.ip_forward"),
        "value": Param(str, help="the bad value"),
        "good": Param(str, help="the value recover() sets and persists"),
        "file": Param(str, required=False, default="/etc/sysctl.d/99-kubernetes.conf"),
    }

    def inject(self):
        return [f"sysctl -w {q(self.params['key'] + '=' + self.params['value'])}"]

    def armed_checks(self):
        p = self.params
        return [check(f"{p['key']} is {p['value']}", "sysctl", {"key": p["key"]}, equals=p["value"])]

    def recover(self):
        p = self.params
        return [
            f"printf '%s = %s\\n' {q(p['key'])} {q(p['good'])} > {q(p['file'])}",
            f"sysctl -p {q(p['file'])}",
        ]

    def persistence_checks(self):
        p = self.params
        return [check(f"{p['key']} is {p['good']}", "sysctl", {"key": p["key"]}, equals=p["good"])]
