"""The host failing under a run, for real, on the smallest lab that shows it: kubelab must say it was
the host (exit 2, the machine and the cause named), keep what it saw, and leave nothing behind.
Never a product verdict, and never a wait that runs to a probe's timeout."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import libvirt
import pytest

from harness.machines.libvirt import LibvirtBackend, domain_name

from .helpers import invoke, objects_of, wait_for

pytestmark = pytest.mark.vm


class Run:
    """`invoke scenario NAME` in the background, its output read as it comes."""

    def __init__(self, name: str, runs: Path, *args: str, env: dict | None = None):
        self.runs = runs
        self.proc = invoke("scenario", name, *args, env=dict(os.environ, KUBELAB_RUNS=str(runs), **(env or {})))
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def record(self) -> dict:
        [path] = self.runs.glob("*/*/run.json")
        return json.loads(path.read_text())

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code

    def break_when(self, text: str, fault, ready_within: float = 900, end_within: float = 600):
        """Once the run says `text`, do `fault()` to the host; then (exit code, seconds from the fault
        to the run's end, what it said). A run still going at the end is stopped (SIGINT) whatever happened."""
        try:
            wait_for(lambda: self.said(text), ready_within, f"the run to say {text!r}")
            fault()
            started = time.monotonic()
            code = self.wait(timeout=end_within)
            return code, time.monotonic() - started, "\n".join(self.lines)
        finally:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
                self.wait(timeout=300)


def _qemu_pid(domain: str) -> int:
    return int(Path(f"/run/libvirt/qemu/{domain}.pid").read_text())


def test_a_killed_qemu_ends_the_run_as_the_hosts_doing_naming_the_machine_within_seconds(
        libvirt_backend, bookworm_image, tmp_path):
    """br-netfilter-missing's guest QEMU killed (SIGKILL, as the OOM killer does) once the fault is armed."""
    run = Run("br-netfilter-missing", tmp_path / "runs")
    code, ended, said = run.break_when(
        "armed-check: ok", lambda: os.kill(_qemu_pid(domain_name(run.record()["lab"]["name"], "node1")), signal.SIGKILL))
    lab = run.record()["lab"]["name"]
    assert code == 2, said
    assert ended < 60, f"the run ended {ended:.0f} s after the kill:\n{said}"
    assert "machine node1: its QEMU process ended under the run" in said
    record = run.record()
    assert record["verdict"]["result"] == "error"
    assert "machine node1: its QEMU process ended under the run (libvirt: domain" in record["verdict"]["reason"]
    assert [m["machine"] for m in record["machines_lost"]] == ["node1"]
    serial = next(Path(run.runs).glob("*/*/evidence/node1.serial.log"))
    assert "node1 login:" in serial.read_text(errors="replace")  # the guest's console, up to the kill
    assert objects_of(lab) == []
    status = invoke("lab.status")
    assert lab not in status.communicate(timeout=120)[0]


def test_the_watch_leaves_a_pools_own_pause_and_a_power_cycle_alone(libvirt_backend, bookworm_image):
    """Only what the host does counts: kubelab's own pause and power-off are not a lost machine."""
    from harness import lifecycle
    from harness.lab import Lab

    from .helpers import remove_lab_whatever_happened, unique_lab_name

    name = unique_lab_name("watch")
    try:
        lab = lifecycle.up(lifecycle.plan_lab(1, "bookworm", 1, 768, name))
        backend = LibvirtBackend()
        assert backend.health(lab) == {}
        assert backend.pause(lab, "node1")
        assert backend.health(lab) == {}  # paused, reason user
        dom = backend.conn.lookupByName(domain_name(name, "node1"))
        dom.resume()
        dom.destroy()  # a power cycle's hard stop (libvirt.py power_cycle)
        assert backend.health(lab) == {}  # shut off, reason destroyed
        lab = Lab.load(name)
        dom.create()
        os.kill(_qemu_pid(domain_name(name, "node1")), signal.SIGKILL)
        found = wait_for(lambda: backend.health(lab), 30, "libvirt to see the QEMU process gone")
        assert list(found) == ["node1"] and "reason crashed" in found["node1"]
    finally:
        remove_lab_whatever_happened(name)


def test_kubelab_killed_outright_leaves_an_orphan_lab_status_names_with_its_record(
        libvirt_backend, bookworm_image, tmp_path):
    """SIGKILL: nothing of kubelab can act. The next `lab.status` names the lab orphaned with its run
    folder, `invoke report` renders that incomplete record, and `lab.down` removes the lab."""
    run = Run("br-netfilter-missing", tmp_path / "runs")
    lab = None
    try:
        wait_for(lambda: run.said("armed-check: ok"), 900, "the fault armed and proven")
        lab = run.record()["lab"]["name"]
        run.proc.send_signal(signal.SIGKILL)
        assert run.wait(timeout=60) == -signal.SIGKILL
        folder = next(Path(run.runs).glob("*/*/run.json")).parent
        status = invoke("lab.status").communicate(timeout=120)[0]
        assert f"ORPHANED: the run that owned it (pid {run.proc.pid}) is gone; its record, incomplete: {folder}" \
            in status, status
        assert run.record()["status"] == "incomplete"
        report = invoke("report", str(folder))
        assert report.wait(timeout=120) == 0, report.stdout.read()
        assert "INCOMPLETE RUN" in (folder / "report.md").read_text()
        down = invoke("lab.down", "-n", lab)
        assert down.wait(timeout=300) == 0, down.stdout.read()
        assert objects_of(lab) == []
    finally:
        if lab and objects_of(lab):
            from .helpers import remove_lab_whatever_happened
            remove_lab_whatever_happened(lab)


@pytest.mark.cluster  # a kubeadm scenario's machines and servers: 4-5 min under TCG, so with -m cluster
def test_the_lab_registry_gone_during_an_install_ends_the_run_naming_it(
        libvirt_backend, sid_node_image, tmp_path):
    """kubeadm-baseline's registry killed as its install starts: exit 2 naming the server and its
    address, never a verdict on the cluster; teardown removes everything."""
    from harness.lab import Lab

    run = Run("kubeadm-baseline", tmp_path / "runs")
    registry = {}

    def kill_the_registry():
        registry.update(Lab.load(run.record()["lab"]["name"]).state["services"]["registry"])
        os.kill(registry["pid"], signal.SIGKILL)

    code, ended, said = run.break_when("prepare: ok", kill_the_registry, ready_within=1200, end_within=900)
    lab = run.record()["lab"]["name"]
    assert code == 2, said
    assert ended < 60, f"the run ended {ended:.0f} s after the kill:\n{said}"
    gone = f"the lab's registry at {registry['url']} (pid {registry['pid']}) is gone"
    assert gone in said
    record = run.record()
    assert record["verdict"]["result"] == "error" and gone in record["verdict"]["reason"]
    assert objects_of(lab) == []


def test_libvirtd_down_a_reading_command_says_how_to_start_it_and_a_run_starts_it(libvirt_backend, bookworm_image):
    """`lab.status` cannot start daemons (it only reads): exit 2 with the command that starts libvirtd,
    and nothing made. `lab.up` prepares the host first: it starts libvirtd itself, says so, and goes on."""
    from harness import host
    from harness.machines.libvirt import LibvirtBackend

    from .helpers import remove_lab_whatever_happened, unique_lab_name

    name = unique_lab_name("nolibvirt")
    before = LibvirtBackend().leftovers()
    try:
        _stop_libvirtd()
        status = invoke("lab.status")
        out = status.communicate(timeout=120)[0]
        assert status.returncode == 2, out
        assert f"fix: `{host.daemon_command('libvirtd')}`, or `invoke doctor --fix`" in out
        up = invoke("lab.up", "--machines", "1", "--name", name, "--memory", "768")
        out = up.communicate(timeout=900)[0]
        assert up.returncode == 0, out
        assert "host: started libvirtd" in out
        assert any(o.startswith("domain") for o in objects_of(name))
    finally:
        host.prepare(log=lambda m: None)  # whatever happened, the host has its daemon back
        libvirt_backend.reconnect()  # the session's shared connection died with the daemon
        remove_lab_whatever_happened(name)
    assert sorted(LibvirtBackend().leftovers()) == sorted(before)


def _stop_libvirtd() -> None:
    import subprocess

    from harness import host

    if host.systemd_is_init():
        subprocess.run(["systemctl", "stop", "libvirtd", "libvirtd.socket", "libvirtd-ro.socket",
                        "libvirtd-admin.socket"], check=False, timeout=120)
    else:
        subprocess.run(["pkill", "-x", "libvirtd"], check=False, timeout=30)
    wait_for(lambda: not host._socket_alive(host.LIBVIRTD_SOCK), 60, "libvirtd to stop")


def test_two_scenarios_and_a_kit_build_at_once_all_succeed_on_their_own_labs(libvirt_backend, bookworm_image, kit,
                                                                              tmp_path):
    """Started together by mistake: the kit build waits on its lock or finds the kit built, and the
    two runs of one scenario get labs of their own (names, networks) and both are met."""
    runs = [Run("cgroup-driver-host", tmp_path / f"runs{i}") for i in (1, 2)]  # the shortest host scenario
    build = invoke("artifacts.build")
    try:
        built = build.communicate(timeout=1800)[0]
        codes = [r.wait(timeout=1800) for r in runs]
    finally:
        for r in runs:
            if r.proc.poll() is None:
                r.proc.send_signal(signal.SIGINT)
                r.wait(timeout=300)
    assert build.returncode == 0, built
    assert codes == [0, 0], "\n\n".join("\n".join(r.lines) for r in runs)
    labs = [r.record()["lab"]["name"] for r in runs]
    assert labs[0] != labs[1]
    networks = [next(line for line in r.lines if line.split("] ", 1)[-1].startswith("network ")) for r in runs]
    subnets = [line.split("(")[1].split(",")[0] for line in networks]
    assert subnets[0] != subnets[1], networks
    assert all(objects_of(lab) == [] for lab in labs)


def test_guests_frozen_under_a_run_end_it_as_the_hosts_doing(libvirt_backend, bookworm_image, tmp_path):
    """Every QEMU of the lab SIGSTOPped for longer than a probe's interval, then SIGCONTed, as a host
    that suspends: no verdict is made from timings across the gap; the run ends exit 2 saying so."""
    run = Run("br-netfilter-missing", tmp_path / "runs")

    def freeze_for_15_s():
        pid = _qemu_pid(domain_name(run.record()["lab"]["name"], "node1"))
        os.kill(pid, signal.SIGSTOP)
        try:  # kubelab may have ended the run, and its teardown the stopped QEMU, before the 15 s are up
            wait_for(lambda: not Path(f"/proc/{pid}").exists(), 15, "the frozen QEMU to be torn down")
        except AssertionError:
            os.kill(pid, signal.SIGCONT)  # 15 s frozen, longer than any probe's poll: now thawed

    code, ended, said = run.break_when("armed-check: ok", freeze_for_15_s)
    assert code == 2, said
    assert ended < 60, f"the run ended {ended:.0f} s after the freeze's 15 s:\n{said}"
    assert "machine node1: its QEMU process is stopped (state T: SIGSTOP on the host)" in said
    assert run.record()["verdict"]["result"] == "error"


@pytest.fixture
def small_disks_folder(tmp_path):
    """A 1 GiB ext4 filesystem, loop-mounted where QEMU (libvirt's qemu user) can reach the files:
    a folder under /var/tmp, not under pytest's private tmp_path."""
    import subprocess
    import uuid

    from tests.conftest import require_tool

    for tool, how in (("losetup", "util-linux"), ("mkfs.ext4", "e2fsprogs"), ("fallocate", "util-linux")):
        require_tool(tool, f"apt-get install {how}")

    def run(*cmd):
        return subprocess.run(list(cmd), check=True, capture_output=True, text=True, timeout=300).stdout.strip()

    image, mnt = tmp_path / "disks.img", Path("/var/tmp") / f"kubelab-test-disks-{uuid.uuid4().hex[:8]}"
    run("truncate", "-s", "1G", str(image))
    run("mkfs.ext4", "-q", "-F", "-m", "0", str(image))  # no root reserve: full for root and QEMU's user alike
    device = run("losetup", "--find", "--show", str(image))
    mnt.mkdir(mode=0o711)
    try:
        run("mount", device, str(mnt))
        mnt.chmod(0o711)
        yield mnt
    finally:
        from harness.machines.libvirt import pool_name

        backend = LibvirtBackend()
        try:  # a failed test must not leave a pool on a folder that is about to go
            pool = backend.conn.storagePoolLookupByName(pool_name(mnt.resolve() / "kubelab"))
            if pool.isActive():
                pool.destroy()
            pool.undefine()
        except libvirt.libvirtError:  # absent, as it should be
            pass
        subprocess.run(["umount", "-l", str(mnt)], check=False, timeout=120)
        subprocess.run(["losetup", "-d", device], check=False, timeout=60)
        subprocess.run(["rmdir", str(mnt)], check=False, timeout=60)


def test_a_full_lab_disk_pauses_the_guest_and_ends_the_run_naming_the_folder_within_seconds(
        libvirt_backend, bookworm_image, small_disks_folder, tmp_path):
    """The labs' disks (KUBELAB_DISKS) on a 1 GiB filesystem, filled beside the guest once the fault is
    armed; the guest then writes, its overlay cannot grow, and QEMU pauses it (werror=stop): the run
    ends exit 2 naming node1, the folder and its free space, and the folder's pool goes with the lab."""
    import subprocess

    from harness.machines.libvirt import pool_name

    from .helpers import remove_lab_whatever_happened

    folder = small_disks_folder
    disks = folder.resolve() / "kubelab"  # kubelab's own folder in the one named
    run = Run("br-netfilter-missing", tmp_path / "runs", env={"KUBELAB_DISKS": str(folder)})
    writer: list[subprocess.Popen] = []

    def fill_then_write():
        lab = run.record()["lab"]["name"]
        assert any(f.name.startswith(f"kubelab-{lab}.") for f in disks.iterdir())  # the lab's disks are there
        free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
        # all but 16 MiB at once (all of it is refused: the file's own metadata needs room), then the rest
        subprocess.run(["fallocate", "-l", str(free - 16 * 2**20), str(folder / "filler")], check=True, timeout=60)
        subprocess.run(["dd", "if=/dev/zero", f"of={folder / 'filler.end'}", "bs=64K"], capture_output=True,
                       timeout=120)  # ends on "No space left on device"
        assert os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize < 2**20
        # from the guest, past its page cache: the overlay must grow on the full disk
        writer.append(invoke("lab.ssh", "-l", lab, "-n", "node1", "-c",
                             "dd if=/dev/urandom of=/var/tmp/fill bs=1M count=512 oflag=direct conv=fsync"))

    lab = ""
    try:
        code, ended, said = run.break_when("armed-check: ok", fill_then_write)
        lab = run.record()["lab"]["name"]
        assert code == 2, said
        assert ended < 90, f"the run ended {ended:.0f} s after the guest's write:\n{said}"
        assert "machine node1: QEMU paused it on a disk write error" in said, said
        assert f"{disks}: " in said and " MiB free" in said
        record = run.record()
        assert record["verdict"]["result"] == "error"
        assert [m["machine"] for m in record["machines_lost"]] == ["node1"]
        assert objects_of(lab) == []
        pools = [p.name() for p in LibvirtBackend().conn.listAllStoragePools(0)]
        assert pool_name(disks) not in pools  # the folder's pool went with its last lab
        assert list(disks.iterdir()) == []
        assert sorted(f.name for f in folder.iterdir()) == ["filler", "filler.end", "kubelab", "lost+found"]
    finally:
        for proc in writer:
            proc.kill()
            proc.communicate(timeout=60)
        if lab:
            remove_lab_whatever_happened(lab)
