"""A run's eye on its machines: the host can take one away under the run (its QEMU process
killed or crashed, QEMU pausing it on a full disk), and then every wait on that machine would
run to its own timeout and end as something else. The watch asks the backend every few seconds
(LabHandle.health), and on the first machine lost it cuts that machine's SSH connection, so the
command waiting on it ends now, and says why; the engine reports that cause as the run's."""

from __future__ import annotations

import threading
import time

INTERVAL = 2.0  # seconds between looks: a libvirt state call each, nothing on the guests


class MachineWatch:
    def __init__(self, handle, note=lambda message: None, interval: float = INTERVAL):
        self.handle, self.note, self.interval = handle, note, interval
        self.lost: dict[str, tuple[str, float]] = {}  # machine -> (cause, when: epoch seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kubelab-machine-watch", daemon=True)

    def start(self) -> "MachineWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 30)

    def look(self) -> dict[str, str]:
        """One look: the machines newly lost, each cut off and noted."""
        try:
            found = self.handle.health()
        except Exception:  # noqa: BLE001 - a backend that cannot answer now (libvirtd restarting) is no news
            return {}
        new = {m: cause for m, cause in found.items() if m not in self.lost}
        for machine, cause in new.items():
            self.lost[machine] = (cause, time.time())
            self.handle.cut(machine, cause)
            self.note(f"machine {machine}: {cause}")
        return new

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.look()

    def cause(self) -> str:
        """The lost machines and why, one line; "" while none is."""
        return "; ".join(f"machine {m}: {cause}" for m, (cause, _) in sorted(self.lost.items()))
