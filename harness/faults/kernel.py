"""A kernel module that is not there: blocked, so nothing can load it behind our back
(module-missing), or only unloaded and named nowhere, as after a boot without a
modules-load.d entry, so an installer that loads modules itself can (module-unloaded)."""

from ..params import Param
from ..probes.base import q
from .base import Fault, check


class _ModuleFault(Fault):
    """A module out of the kernel; recovered by loading it and naming it for the next boot."""
    PARAMS = {
        "module": Param(str, required=False, default="br_netfilter"),
        "persist_file": Param(str, required=False, default="/etc/modules-load.d/k8s.conf",
                              help="where recover() persists the module"),
    }

    def _load_and_persist(self) -> list[str]:
        m = self.params["module"]
        return [f"modprobe {q(m)}", f"printf '%s\\n' {q(m)} > {q(self.params['persist_file'])}"]

    def persistence_checks(self):
        m = self.params["module"]
        return [check(f"{m} loaded", "module-loaded", {"module": m}, equals=True)]


class ModuleMissing(_ModuleFault):
    kind = "module-missing"
    summary = "module unloaded and blocked (`install <m> /bin/false`), so nothing loads it"

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
        return [f"rm -f {self._block_file}", *self._load_and_persist()]


# where systemd-modules-load reads the modules it loads at boot (modules-load.d(5))
MODULES_LOAD_DIRS = "/etc/modules-load.d /run/modules-load.d /usr/lib/modules-load.d /usr/local/lib/modules-load.d"


class ModuleUnloaded(_ModuleFault):
    kind = "module-unloaded"
    summary = "module unloaded and named in no modules-load.d file: as after a boot that did not load it"

    def _naming(self) -> str:
        """The modules-load.d files that name the module, one per line."""
        return f"grep -lxs -- {q(self.params['module'])} /dev/null $(ls -d {MODULES_LOAD_DIRS} 2>/dev/null | sed 's|$|/*.conf|')"

    def inject(self):
        m = self.params["module"]
        return [
            # the entries that name it go, so a reboot would not load it either
            f"for f in $({self._naming()}); do sed -i -e '/^{m}$/d' \"$f\"; done; true",
            f"modprobe -r {q(m)} 2>/dev/null || true",
        ]

    def armed_checks(self):
        m = self.params["module"]
        return [
            check(f"{m} not loaded", "module-loaded", {"module": m}, equals=False),
            check(f"{m} named in no modules-load.d file", "command", {"cmd": f"{self._naming()} | wc -l"},
                  pattern=r"\A0\s*\Z"),
        ]

    def recover(self):
        return self._load_and_persist()
