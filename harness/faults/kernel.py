"""A kernel module that is not there, and that nothing can load behind our back."""

from ..params import Param
from ..probes.base import q
from .base import Fault, check


class ModuleMissing(Fault):
    kind = "module-missing"
    summary = "module unloaded and blocked (`install <m> /bin/false`), so nothing loads it"
    PARAMS = {
        "module": Param(str, required=False, default="br_netfilter"),
        "persist_file": Param(str, required=False, default="/etc/modules-load.d/k8s.conf",
                              help="where recover() persists the module"),
    }

    @property
    def _block_file(self) -> str:
        return f"/etc/modprobe.d/kubelab-fault-{self.params['module']}.conf"

    def inject(self):
        m = self.params["module"]
        return [
            f"printf 'install {m} /bin/false\\n' > {self._block_file}",
            f"modprobe -r {q(m)} 2>/dev/null || true",
        ]

    def armed_checks(self):
        m = self.params["module"]
        return [
            check(f"{m} not loaded", "module-loaded", {"module": m}, equals=False),
            check(f"{m} cannot be loaded", "command", {"cmd": f"modprobe {q(m)}"}, equals=1),
        ]

    def recover(self):
        m = self.params["module"]
        return [
            f"rm -f {self._block_file}",
            f"modprobe {q(m)}",
            f"printf '%s\\n' {q(m)} > {q(self.params['persist_file'])}",
        ]

    def persistence_checks(self):
        m = self.params["module"]
        return [check(f"{m} loaded", "module-loaded", {"module": m}, equals=True)]
