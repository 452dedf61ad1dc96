"""Building a node image on stand-in machines: the lab comes from bringup (never from
lifecycle), the machine is powered off and its disk found through the backend interface, and
the lab goes whatever happens."""

import pytest

from harness import bringup
from harness.artifacts.versions import DEFAULT_KUBERNETES
from harness.images import node, store
from harness.progress import Progress

TAG = f"v{DEFAULT_KUBERNETES}"
KIT = {"kubernetes": TAG, "go": "go1.26.8", "components": {}, "images": {}}


class Backend:
    """The two calls node-image building makes of a MachineBackend, recorded."""

    def __init__(self, disk):
        self.calls, self.disk = [], disk

    def power_off(self, lab, machine, timeout):
        self.calls.append(("power_off", machine, timeout))

    def disk_file(self, lab, machine):
        self.calls.append(("disk_file", machine))
        return self.disk


class Lab:
    name = "nodeimg-abcdef"
    state = {"machines": [{"name": "node1"}]}

    def ssh_target(self, machine):
        return machine


class Remote:
    def __init__(self, target):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    base_dir = tmp_path / "base"
    base_dir.mkdir()
    for f in ("root.qcow2", "vmlinuz", "initrd.img"):
        (base_dir / f).write_text(f)
    base = store.Image(base_dir, {"schema": store.MANIFEST_SCHEMA, "id": "debian-sid-x", "suite": "sid",
                                  "versions": {}})
    backend = Backend(tmp_path / "overlay.qcow2")
    seen = {"specs": [], "downs": [], "converted": []}
    monkeypatch.setattr(bringup, "ready", lambda name, progress: backend)
    monkeypatch.setattr(bringup, "start", lambda spec, image, b, progress: seen["specs"].append((spec, image)) or Lab())
    monkeypatch.setattr(bringup, "down", lambda name, progress=None: seen["downs"].append(name))
    monkeypatch.setattr(node, "check_capacity", lambda machines, kubernetes=None: None)
    monkeypatch.setattr("harness.remote.ssh.SshRemote", Remote)
    monkeypatch.setattr(node, "_seal", lambda remote, progress: None)

    def convert(argv, **kw):
        seen["converted"].append(argv)
        (tmp_path / argv[-1]).write_text("flattened")

    monkeypatch.setattr(node.subprocess, "run", convert)
    return base, backend, seen


def test_the_image_is_provisioned_on_a_bringup_lab_then_flattened_through_the_backend(stand_ins, tmp_path,
                                                                                       monkeypatch):
    base, backend, seen = stand_ins
    monkeypatch.setattr(node, "_provision", lambda remote, kit, files, preload, progress: {"kubeadm": TAG})
    final = tmp_path / "cache" / "images" / f"node-sid-{TAG}-x"
    final.parent.mkdir(parents=True)
    image = node._build(base, KIT, TAG, {}, False, final, "abcdef123456", Progress(quiet=True))
    [(spec, booted)] = seen["specs"]
    assert booted is base and not spec.node_image and spec.kubernetes == TAG
    assert backend.calls == [("power_off", "node1", node.POWER_OFF_TIMEOUT), ("disk_file", "node1")]
    assert seen["converted"][0][:4] == ["qemu-img", "convert", "-O", "qcow2"]
    assert seen["converted"][0][4] == str(backend.disk)
    assert seen["downs"] == ["nodeimg-abcdef"]
    assert image.manifest["kubernetes"]["kubeadm"] == TAG and image.manifest["base_image"] == base.id


def test_a_failed_provisioning_still_removes_the_lab(stand_ins, tmp_path, monkeypatch):
    base, backend, seen = stand_ins

    def breaks(*args):
        raise RuntimeError("curl failed")

    monkeypatch.setattr(node, "_provision", breaks)
    with pytest.raises(RuntimeError, match="curl failed"):
        node._build(base, KIT, TAG, {}, False, tmp_path / "final", "abcdef123456", Progress(quiet=True))
    assert seen["downs"] == ["nodeimg-abcdef"] and backend.calls == []
    assert not list((tmp_path / "cache").glob("images/.build-*"))
