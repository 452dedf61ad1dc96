"""What every machine backend offers, and the plain data it works with.

Backends know nothing about Kubernetes; faults and probes know nothing about
backends: they get a Machine and talk to it through its SshTarget.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ..remote.ssh import SshTarget

if TYPE_CHECKING:
    from ..lab import Lab
    from ..progress import Progress

# Every libvirt object kubelab creates starts with this, and domains also carry
# kubelab metadata, so a janitor can find leftovers no state file knows about.
PREFIX = "kubelab-"
METADATA_NS = "urn:x-kubelab:lab:1"
METADATA_PREFIX = "kubelab"


@dataclass(frozen=True)
class Machine:
    name: str
    role: str
    state: str  # "running", "shut off", "absent", ...
    ip: str
    ssh: SshTarget


class MachineBackend(abc.ABC):
    name: ClassVar[str]

    @abc.abstractmethod
    def check(self) -> None:
        """Raise BackendUnavailable, with the fix, if this host cannot use the backend."""

    @abc.abstractmethod
    def up(self, lab: "Lab", progress: "Progress") -> list[Machine]:
        """Create and boot every machine of `lab`; return them once SSH answers.
        Records each object in the lab state as soon as it exists. Raises
        BackendError or MachineTimeout; the caller tears down on any failure."""

    @abc.abstractmethod
    def machines(self, lab: "Lab") -> list[Machine]:
        """The lab's machines as the backend sees them now (state may be `absent`)."""

    @abc.abstractmethod
    def destroy(self, lab: "Lab") -> list[str]:
        """Remove every object of `lab`; idempotent. Returns what was removed."""

    @abc.abstractmethod
    def snapshot(self, lab: "Lab", machine: str, tag: str) -> None:
        """Save the machine's state under `tag`. May raise Unsupported."""

    @abc.abstractmethod
    def restore(self, lab: "Lab", machine: str, tag: str, timeout: float) -> None:
        """Return the machine to snapshot `tag` and wait until SSH answers."""

    def pause(self, lab: "Lab", machine: str) -> bool:
        """Stop the machine's vCPUs where it stands (memory kept) until a `restore`; False where
        the backend cannot, and the machine runs on."""
        return False

    def power_cycle(self, lab: "Lab", machine: str, kernel_args: str, timeout: float) -> str:
        """Power the machine off and boot it, once with `kernel_args` added to its kernel
        command line (as typed at a boot prompt: the way back into a machine the network
        no longer reaches); wait until SSH answers. Returns what happened, for the record."""
        from ..errors import Unsupported

        raise Unsupported(f"the {type(self).__name__} cannot power-cycle a machine")

    @abc.abstractmethod
    def power_off(self, lab: "Lab", machine: str, timeout: float) -> None:
        """Shut the machine down from inside (ACPI, so its disk is clean) and wait until it is
        off; raise BackendError if it still runs after `timeout` (it is never forced off)."""

    @abc.abstractmethod
    def health(self, lab: "Lab") -> dict[str, str]:
        """{machine: why it stopped under the run} for each machine the host took away (a crashed or
        killed emulator, a pause on a disk error, a domain that is gone); {} when all run as left,
        or when the backend cannot tell."""
        return {}

    def cpu_seconds(self, lab: "Lab") -> dict[str, tuple[int, float]]:
        """{machine: (which emulator process, CPU seconds it has used so far, every vCPU together)};
        {} when the backend cannot tell. A phase records the difference, for the same process only
        (a power cycle starts a new one, counting from zero): what the guests did while kubelab waited."""
        return {}

    def disk_file(self, lab: "Lab", machine: str) -> Path:
        """The file holding the machine's root disk as it is now (its writable layer over the
        image), for a caller that copies it while the machine is off."""

    @abc.abstractmethod
    def collect_logs(self, lab: "Lab", machine: str, dest: Path) -> list[Path]:
        """Copy the machine's console log and definition into `dest`."""

    @abc.abstractmethod
    def leftovers(self) -> list[str]:
        """Objects of this backend that look like kubelab's, whatever their lab."""

    @abc.abstractmethod
    def remove_leftovers(self, keep_labs: set[str]) -> list[str]:
        """Remove kubelab objects that belong to no lab in `keep_labs`."""
