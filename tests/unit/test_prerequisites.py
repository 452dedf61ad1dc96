"""A lab's kit and containerd build are built when absent or damaged, and only then; the
builders are injected, so no Go runs here."""

import json

import pytest

from harness.artifacts import prerequisites, store
from harness.artifacts.versions import DEFAULT_KUBERNETES, KubeVersion

VERSION = KubeVersion.parse(DEFAULT_KUBERNETES)


class Notes:
    def __init__(self):
        self.lines = []

    def note(self, line):
        self.lines.append(line)

    update = note


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def put(key: str, name: str, data: bytes) -> dict:
    work = store.workdir(key)
    (work / name).write_bytes(data)
    entry = store.commit(key, work, {"component": name, "module": f"{name}@v1", "build_seconds": 1.0})
    return {"key": entry.key, "module": entry.data["module"], "sha256": entry.data["sha256"]}


def write_kit(cache) -> dict:
    from harness.artifacts.kit import kits_dir

    registry, files = cache / "artifacts" / "registry" / "r1", cache / "artifacts" / "files" / VERSION.tag
    registry.mkdir(parents=True), files.mkdir(parents=True)
    from harness.artifacts.kit import KIT_SCHEMA

    record = {"schema": KIT_SCHEMA, "kubernetes": VERSION.tag, "kubeadm_images": ["registry.k8s.io/pause:3.10.2"],
              "components": {"kubeadm": put("a" * 64, "kubeadm", b"kubeadm binary"),
                             "etcd": put("b" * 64, "etcd", b"etcd binary")},
              "images": {"registry.k8s.io/pause:3.10.2": {**put("c" * 64, "index.json", b"{}"), "manifest": "m"}},
              "registry": str(registry), "files": str(files)}
    kits_dir().mkdir(parents=True, exist_ok=True)
    (kits_dir() / f"kubernetes-{VERSION.tag}.json").write_text(json.dumps(record))
    return record


class Builder:
    def __init__(self, result=None):
        self.calls, self.result = [], result or {"built": True}

    def __call__(self, version, progress):
        self.calls.append(version)
        return self.result


def refuse(*args):
    pytest.fail("built or checked against the proxy although nothing was missing")


def test_a_missing_kit_is_built_after_saying_what_and_how_long():
    build, notes = Builder(), Notes()
    assert prerequisites.ensure_kit(VERSION, notes, build=build, check=KubeVersion.parse) == {"built": True}
    assert build.calls == [VERSION]
    assert notes.lines == [f"the Kubernetes {VERSION} kit is not built yet: building it from Go modules, about 15 min "
                           f"with a cold Go cache on a 2-core host (`invoke artifacts.build --kubernetes {VERSION}` "
                           "does the same)"]


def test_an_intact_kit_is_used_as_it_is(cache):
    record = write_kit(cache)
    assert prerequisites.ensure_kit(VERSION, Notes(), build=refuse, check=refuse) == record


def test_a_damaged_store_entry_makes_the_kit_be_built_again(cache):
    write_kit(cache)
    (store.entry_dir("b" * 64) / "etcd").write_bytes(b"tampered")
    build, notes = Builder(), Notes()
    prerequisites.ensure_kit(VERSION, notes, build=build, check=KubeVersion.parse)
    assert len(build.calls) == 1
    assert "kit is damaged: component etcd: etcd: sha256 no longer" in notes.lines[0]


@pytest.mark.parametrize("gone", ["registry", "files", "image"])
def test_a_kit_missing_a_part_is_built_again(cache, gone):
    import shutil

    record = write_kit(cache)
    shutil.rmtree(store.entry_dir("c" * 64) if gone == "image" else record[gone])
    build = Builder()
    prerequisites.ensure_kit(VERSION, Notes(), build=build, check=KubeVersion.parse)
    assert len(build.calls) == 1


def test_a_kit_an_older_kubelab_made_is_made_again_saying_why(cache):
    from harness.artifacts.kit import KIT_SCHEMA, kits_dir

    record = write_kit(cache)
    (kits_dir() / f"kubernetes-{VERSION.tag}.json").write_text(json.dumps({**record, "schema": KIT_SCHEMA - 1}))
    build, notes = Builder(), Notes()
    prerequisites.ensure_kit(VERSION, notes, build=build, check=KubeVersion.parse)
    assert len(build.calls) == 1
    assert f"made by an older kubelab (kit schema {KIT_SCHEMA - 1}, now {KIT_SCHEMA})" in notes.lines[0]


def test_a_version_the_proxy_refuses_is_refused_before_building():
    from harness.errors import UsageError

    def check(text):
        raise UsageError(f"--kubernetes {text}: not served")

    with pytest.raises(UsageError, match="not served"):
        prerequisites.ensure_kit(VERSION, Notes(), build=refuse, check=check)


def test_with_gos_cache_warm_from_a_finished_build_the_estimate_is_the_warm_one(cache):
    from harness.artifacts.kit import kits_dir

    (cache / "go" / "build" / "00").mkdir(parents=True)  # an interrupted cold build: still cold
    notes = Notes()
    prerequisites.ensure_kit(VERSION, notes, build=Builder(), check=KubeVersion.parse)
    assert "about 15 min with a cold Go cache" in notes.lines[0]
    kits_dir().mkdir(parents=True)
    (kits_dir() / "kubernetes-v1.35.4.json").write_text("{}")  # another release's kit was finished here
    prerequisites.ensure_kit(VERSION, notes, build=Builder(), check=KubeVersion.parse)
    assert "about 6 min with Go's build cache warm on a 2-core host" in notes.lines[1]


def test_a_missing_containerd_build_is_built_and_an_intact_one_is_not(cache):
    from harness.artifacts.containerd import record_path

    build, notes = Builder(), Notes()
    prerequisites.ensure_containerd("2.4.2", notes, build=build, check=lambda tag: tag)
    assert build.calls == ["v2.4.2"] and notes.lines[0].startswith("containerd 2.4.2 is not built yet: building it")
    record = {"containerd": "v2.4.2", "components": {"containerd": put("d" * 64, "containerd", b"bin")}, "files": {}}
    record_path("v2.4.2").parent.mkdir(parents=True, exist_ok=True)
    record_path("v2.4.2").write_text(json.dumps(record))
    assert prerequisites.ensure_containerd("2.4.2", Notes(), build=refuse, check=refuse) == record


def test_lab_up_builds_a_missing_kit_before_the_node_image(monkeypatch):
    """`invoke scenario` of a kubeadm scenario on a fresh machine: lab.up builds the kit
    (here: the injected builder) where it used to stop with `no kit for Kubernetes`."""
    from harness import lifecycle
    from harness.artifacts import kit as kits
    from harness.images import containerd_image, node
    from harness.lab import LabSpec, MachineSpec

    order = []

    class Stop(Exception):
        pass

    def node_image(*args, **kwargs):
        order.append("node image")
        raise Stop

    monkeypatch.setattr(lifecycle, "ready", lambda backend, progress: order.append("host and backend ready"))
    monkeypatch.setattr(kits, "check_version", KubeVersion.parse)
    monkeypatch.setattr(kits, "build_kit", lambda version, progress: order.append(f"build kit {version}")
                        or {"kubernetes": version.tag})
    monkeypatch.setattr(node, "ensure", node_image)
    monkeypatch.setattr(containerd_image, "base_image", lambda *a, **kw: pytest.fail("the suite image, not the node's"))
    spec = LabSpec("fresh", "sid", "libvirt", (MachineSpec("cp1", "control-plane", 2, 3072),), kubernetes=VERSION.tag)
    with pytest.raises(Stop):
        lifecycle.up(spec, Notes())
    assert order == ["host and backend ready", f"build kit {VERSION}", "node image"]


def test_dry_run_says_the_run_builds_the_kit_first(monkeypatch):
    from harness import tuning
    from harness.scenario import dryrun
    from harness.scenario.files import find
    from harness.scenario.load import load

    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": None)
    scenario = load(find("flannel-no-brnetfilter"))
    lines = dryrun.plan_lines(scenario, "sid", tuned=tuning.decide("qemu"))
    assert f"# the Kubernetes {scenario.install.kubernetes} kit is not built: the run builds it first, about " \
           "15 min with a cold Go cache on a 2-core host" in lines
    lines = dryrun.plan_lines(scenario.with_containerd("2.4.2"), "sid", tuned=tuning.decide("qemu"))
    assert any(line.startswith("# containerd 2.4.2 is not built: the run builds it first") for line in lines)
