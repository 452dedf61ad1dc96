"""A run's eye on its machines and the lab's servers: the host can take one away under the run
(a QEMU process killed or crashed, QEMU pausing a guest on a full disk, the registry's process
gone), and then every wait on it would run to its own timeout and end as something else, or as a
product verdict ("ImagePullBackOff"). The watch asks every few seconds (LabHandle.health); on a
loss it cuts the SSH connections that depend on it, so the command waiting ends now, and says
why; the engine makes that the run's verdict (error, exit 2), whatever the checks said."""

from __future__ import annotations

import threading
import time

INTERVAL = 2.0  # seconds between looks: a libvirt state call each, nothing on the guests
SUSPEND_GAP = 5.0  # seconds the boot clock may run ahead of the monotonic one before it was a suspend


class MachineWatch:
    def __init__(self, handle, note=lambda message: None, interval: float = INTERVAL):
        self.handle, self.note, self.interval = handle, note, interval
        self.lost: dict[str, tuple[str, float]] = {}  # machine -> (cause, when: epoch seconds)
        self._stop = threading.Event()
        self._clocks: tuple[float, float] | None = None
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
            found = {}
        slept = self._host_slept()
        if slept:
            found = {**found, **{m: slept for m in self.handle.machines}}
        new = {m: cause for m, cause in found.items() if m not in self.lost}
        for what, cause in new.items():
            self.lost[what] = (cause, time.time())
            self.handle.cut(what, cause)
            self.note(_said(what, cause))
        return new

    def _host_slept(self) -> str:
        """The host suspended since the last look: its boot clock ran on while the monotonic one stood."""
        boot, mono = time.clock_gettime(time.CLOCK_BOOTTIME), time.monotonic()
        last, self._clocks = self._clocks, (boot, mono)
        if last is None:
            return ""
        gap = (boot - last[0]) - (mono - last[1])
        return (f"the host was suspended for {gap:.0f} s under the run: guests stood still, and every timing "
                "across the gap is not the cluster's") if gap > SUSPEND_GAP else ""

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.look()

    def cause(self) -> str:
        """What the host took away and why, one line; "" while nothing is."""
        return "; ".join(_said(what, cause) for what, (cause, _) in sorted(self.lost.items()))


def _said(what: str, cause: str) -> str:
    """A machine by its name; a server's cause names it already."""
    return cause if what.startswith("server ") else f"machine {what}: {cause}"
