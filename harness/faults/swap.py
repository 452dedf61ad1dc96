"""Active swap, from a real swap file listed in fstab (so a reboot keeps it)."""

import re

from ..params import Param
from ..probes.base import q
from .base import Fault, check


class SwapOn(Fault):
    kind = "swap-on"
    summary = "a swap file, active and in /etc/fstab"
    PARAMS = {
        "size_mib": Param(int, required=False, default=256),
        "path": Param(str, required=False, default="/swapfile.kubelab"),
    }

    def inject(self):
        p, size = q(self.params["path"]), int(self.params["size_mib"])
        return [
            f"fallocate -l {size}M {p} && chmod 600 {p} && mkswap {p}",
            f"swapon {p}",
            f"printf '%s none swap sw 0 0\\n' {p} >> /etc/fstab",
        ]

    def armed_checks(self):
        path = self.params["path"]
        return [check(f"{path} active", "swaps", {}, pattern=rf"(?m)^{re.escape(path)}\s+file\s")]

    def recover(self):
        path = self.params["path"]
        return [
            "swapoff -a",
            f"sed -i '\\#^{path} #d' /etc/fstab",
            f"rm -f {q(path)}",
        ]

    def persistence_checks(self):
        return [check("no active swap", "swaps", {}, equals=[])]
