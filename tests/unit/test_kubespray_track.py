"""The kubespray install track against a made-up checkout (tests/unit/kubespray_tree.py) and a
kit record written by the test: which checkout a run uses, what the kit cannot serve (refused
before any machine), and the files and command the install steps carry."""

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness.errors import UsageError
from harness.kubespray import serving
from harness.kubespray.downloads import Defaults
from harness.model import InstallDef, LabDef, MachineDef, Scenario
from harness.progress import Progress
from harness.scenario.plan import plan
from harness.kubespray.tcg import variables as tcg_variables
from harness.tracks import TRACKS
from harness.tuning import decide

from . import kubespray_tree

TRACK = TRACKS["kubespray"]
KUBE = "1.40.1"  # the made-up tree's newest


def install(checkout: Path | str = "", **kw) -> InstallDef:
    return InstallDef(track="kubespray", kubernetes=KUBE, cni="none", kubespray=str(checkout),
                      kubespray_source="install.kubespray" if checkout else "", **kw)


@pytest.fixture
def tree(tmp_path):
    return kubespray_tree.write(tmp_path / "kubespray")


def kit(root: Path, defaults: Defaults, leave_out: tuple[str, ...] = (), version: str = KUBE) -> dict:
    """A kit record whose file tree holds every file of the download list but `leave_out`,
    and whose registry holds every image but those named in `leave_out`."""
    files = root / "files"
    images = {}
    for d in defaults.resolve(version, {"kube_network_plugin": "cni"}):
        if d.name in leave_out:
            continue
        if d.kind == "file":
            f = files / d.path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(f"the kit's {d.name}\n".encode())
        else:
            images[d.image] = {}
    return {"files": str(files), "images": images}


def test_the_checkout_comes_from_the_option_then_the_environment_then_the_file(tree, tmp_path, monkeypatch):
    other = kubespray_tree.write(tmp_path / "other")
    monkeypatch.setenv("KUBELAB_KUBESPRAY", str(other))
    from_file = install(tree)
    assert TRACK.resolve(from_file, str(tree)).kubespray_source == "--kubespray"
    got = TRACK.resolve(from_file)
    assert (got.kubespray, got.kubespray_source) == (str(other), "KUBELAB_KUBESPRAY")
    monkeypatch.delenv("KUBELAB_KUBESPRAY")
    assert TRACK.resolve(from_file).kubespray_source == "install.kubespray"


def test_no_checkout_is_refused_for_a_run_and_a_placeholder_in_a_dry_run(monkeypatch):
    monkeypatch.delenv("KUBELAB_KUBESPRAY", raising=False)
    with pytest.raises(UsageError, match="no kubespray checkout: pass --kubespray PATH, set KUBELAB_KUBESPRAY"):
        TRACK.resolve(install())
    assert TRACK.resolve(install(), required=False) == install()


def test_a_folder_that_is_not_a_checkout_names_what_it_lacks(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBELAB_KUBESPRAY", raising=False)
    half = kubespray_tree.write(tmp_path / "half", omit=("cluster.yml", "playbooks"))
    with pytest.raises(UsageError, match=r"is not a kubespray checkout: it has no cluster.yml, "
                                         r"playbooks/ansible_version.yml;"):
        TRACK.resolve(install(), str(half))


def test_a_version_outside_the_checkouts_tables_is_refused_before_anything(tree, monkeypatch):
    monkeypatch.delenv("KUBELAB_KUBESPRAY", raising=False)
    with pytest.raises(UsageError, match=r"Kubernetes 1.36.3 is not in kubespray 9.8.7's checksum tables"):
        TRACK.resolve(replace(install(tree), kubernetes="1.36.3"))


def test_other_tracks_refuse_a_kubespray_checkout():
    with pytest.raises(UsageError, match="--kubespray: this scenario installs with the `kubeadm` track"):
        TRACKS["kubeadm"].resolve(InstallDef(track="kubeadm"), "/some/checkout")


def test_what_the_kit_lacks_is_named_with_kubesprays_path(tree, tmp_path):
    defaults = Defaults(tree, "9.8.7")
    downloads = defaults.resolve(KUBE, {"kube_network_plugin": "cni"})
    record = kit(tmp_path, defaults, leave_out=("runc", "pause"))
    served = serving.serving(downloads, record)
    assert not served.complete
    assert served.problems() == ["file runc: github.com/example/runc/releases/download/v2.1.0/runc.amd64",
                                 "image pause: registry.k8s.io/pause:9.1"]
    assert sorted(served.files) == ["crictl", "kubeadm"]
    sha = serving.sha256_of(served.files)
    assert sha["kubeadm"] == hashlib.sha256(b"the kit's kubeadm\n").hexdigest()


def test_docker_hub_images_match_with_or_without_their_prefix(tmp_path):
    from harness.kubespray.downloads import Download

    wanted = [Download("nginx", "image", ("kube_node",), repo="docker.io/library/nginx", tag="1.30.1-alpine")]
    assert serving.serving(wanted, {"files": str(tmp_path), "images": {"nginx:1.30.1-alpine": {}}}).complete
    assert not serving.serving(wanted, {"files": str(tmp_path), "images": {"nginx:1.30.0-alpine": {}}}).complete


def test_preflight_refuses_a_kit_that_cannot_serve_before_any_machine(tree, tmp_path, monkeypatch):
    from harness.artifacts import prerequisites

    record = kit(tmp_path, Defaults(tree, "9.8.7"), leave_out=("crictl",))
    asked = []
    monkeypatch.setattr(prerequisites, "ensure_kit", lambda version, progress: asked.append(version) or record)
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=(
        MachineDef(name="cp1", role="control-plane"),)), install=install(tree))
    with pytest.raises(UsageError) as err:
        TRACK.preflight(scenario, Progress(quiet=True))
    assert str(asked[0]) == KUBE
    assert "the Kubernetes 1.40.1 kit cannot serve what kubespray 9.8.7 downloads" in str(err.value)
    assert "file crictl: github.com/example/crictl/v1.40.0/crictl-linux.tgz" in str(err.value)
    assert "No machine was created" in str(err.value)


class FakeLab:
    name = "demo"
    gateway = "192.168.150.1"
    client_key = Path("/labs/demo/keys/id_ed25519")
    IPS = {"cp1": "192.168.150.10", "w1": "192.168.150.11"}

    def ip(self, machine):
        return self.IPS[machine]

    def host_public_key(self, machine):
        return f"ssh-ed25519 AAAAkey{machine} root@{machine}"


def test_the_install_steps_write_the_files_then_run_cluster_yml_then_fetch_admin_conf(tree, tmp_path):
    defaults = Defaults(tree, "9.8.7")
    record = kit(tmp_path, defaults)
    machines = (MachineDef(name="cp1", role="control-plane"), MachineDef(name="w1", role="worker"))
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines),
                        install=install(tree, schedulable_control_plane=True))
    roles = {"cp1": "control-plane", "w1": "worker"}
    work = tmp_path / "run" / "install"
    ctx = TRACK.context(scenario, FakeLab(), roles, {}, record, decide("qemu"), workdir=work)
    steps = [s for s in plan(scenario, roles, {"cp1": {}, "w1": {}}, install=ctx) if s.phase == "install"]
    # guests without a default route: every machine gets a link route for the Service range
    # first (measured: flannel crash-looped on `dial tcp 10.96.0.1:443: connect: network is
    # unreachable` under kubespray until it had one)
    routes, dropins, steps = steps[:4], steps[4:8], steps[8:]
    assert [(s.machine, s.action, s.name) for s in routes] == [
        (m, "run", name) for m in ("cp1", "w1") for name in ("route to the Service network", "routes kept across reboots")]
    assert routes[0].command == f"ip route replace {scenario.install.service_cidr} dev eth0"
    # under TCG, containerd (and so its shims) and the kubelet get the kubeadm track's Go settings,
    # as drop-ins the play's daemon-reload reads (kubespray has no variable for them)
    assert [(s.machine, s.action, s.name) for s in dropins] == [
        (m, "write", f"{u} Go runtime settings") for m in ("cp1", "w1") for u in ("containerd", "kubelet")]
    assert dropins[0].command.endswith("/etc/systemd/system/containerd.service.d/20-kubelab-tcg.conf")
    assert dropins[0].content == "[Service]\nEnvironment=GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1\n"
    assert [(s.machine, s.action, s.name) for s in steps] == [
        ("host", "host-write", "kubespray: inventory.yml"), ("host", "host-write", "kubespray: known_hosts"),
        ("host", "host-write", "kubespray: vars.yml"), ("host", "host-write", "kubespray: checksums.yml"),
        ("host", "host-run", "kubespray: cluster.yml"), ("cp1", "fetch", "admin.conf")]
    files = {Path(s.command).name: s.content for s in steps if s.action == "host-write"}
    inventory = yaml.safe_load(files["inventory.yml"])["all"]
    assert inventory["hosts"]["w1"] == {"ansible_host": "192.168.150.11", "ip": "192.168.150.11",
                                        "access_ip": "192.168.150.11"}
    assert list(inventory["children"]["kube_node"]["hosts"]) == ["cp1", "w1"]  # S2: the control plane too
    assert files["known_hosts"] == ("192.168.150.10 ssh-ed25519 AAAAkeycp1\n"
                                    "192.168.150.11 ssh-ed25519 AAAAkeyw1\n")
    variables = yaml.safe_load(files["vars.yml"])
    assert (variables["kube_version"], variables["files_repo"]) == (KUBE, "http://kubelab-host:8080")
    assert variables["unsafe_show_logs"] is True
    # the lab's host address as the only nameserver (nothing answers there): preinstall asserts one
    assert variables["upstream_dns_servers"] == ["192.168.150.1"]
    checksums = yaml.safe_load(files["checksums.yml"])
    served = hashlib.sha256(b"the kit's kubeadm\n").hexdigest()
    assert checksums["kubeadm_checksums"]["amd64"][KUBE] == f"sha256:{served}"
    assert checksums["kubeadm_checksums"]["amd64"]["1.40.0"] == f"sha256:{kubespray_tree.SHA['d']}"  # upstream's row
    run = steps[4]
    assert run.host.argv[1:] == ("-i", str(work / "inventory.yml"), "-e", f"@{work / 'vars.yml'}",
                                 "-e", f"@{work / 'checksums.yml'}", "cluster.yml")
    assert run.host.cwd == tree and run.timeout == 5400.0
    assert f"UserKnownHostsFile={work / 'known_hosts'}" in run.host.env["ANSIBLE_SSH_ARGS"]
    assert steps[5].command == "cat /etc/kubernetes/admin.conf"


def test_flannel_runs_the_kits_images_below_the_lab_registry(tree):
    from harness.artifacts.kit import FLANNEL_CNI_IMAGE, FLANNEL_IMAGE
    from harness.tracks.kubespray import settings

    got = settings(replace(install(tree), cni="flannel"))
    assert got["kube_network_plugin"] == "flannel"
    assert (got["flannel_image_repo"], got["flannel_image_tag"]) == (
        "{{ github_image_repo }}/flannel-io/flannel", FLANNEL_IMAGE.rsplit(":", 1)[1])
    assert "{{ github_image_repo }}" + FLANNEL_CNI_IMAGE.removeprefix("ghcr.io").rsplit(":", 1)[0] == \
        got["flannel_init_image_repo"]
    assert got["flannel_interface"] == "eth0"  # flanneld otherwise looks for a default route
    assert "flannel_image_repo" not in settings(install(tree))  # cni: none
    assert "flannel_interface" not in settings(install(tree))


def test_the_vars_file_carries_the_tcg_allowances_only_under_tcg(tree, tmp_path):
    defaults = Defaults(tree, "9.8.7")
    record = kit(tmp_path, defaults)
    machines = (MachineDef(name="cp1", role="control-plane"), MachineDef(name="w1", role="worker"))
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines), install=install(tree))
    roles = {"cp1": "control-plane", "w1": "worker"}

    def vars_file(tuned):
        ctx = TRACK.context(scenario, FakeLab(), roles, {}, record, tuned, workdir=tmp_path / "w")
        return yaml.safe_load(dict(ctx.files)[str(tmp_path / "w" / "vars.yml")]), ctx.timeout

    under_tcg, tcg_timeout = vars_file(decide("qemu"))
    under_kvm, kvm_timeout = vars_file(decide("kvm", "kvm"))
    assert under_tcg["etcd_election_timeout"] == "5000" and "etcd_election_timeout" not in under_kvm
    containerd = TRACK.runtime_containerd(scenario.install)  # the checkout's containerd_version
    assert set(under_tcg) - set(under_kvm) == set(tcg_variables(decide("qemu"), {}, containerd))
    assert under_tcg["containerd_extra_runtime_args"] == {"stats_collect_period": "30s"}, containerd
    assert "containerd_extra_runtime_args" not in under_kvm
    assert (tcg_timeout, kvm_timeout) == (5400.0, 2700.0)
    assert TRACK.record(scenario, decide("kvm", "kvm"))["kubespray_variables_for_the_acceleration"] == {}


def test_install_variables_reach_the_vars_and_what_the_kit_is_asked_for(tree):
    from harness.tracks.kubespray import settings

    chosen = install(tree, variables=(("enable_nodelocaldns", False), ("pause_version", "9.5")))
    assert settings(chosen)["enable_nodelocaldns"] is False
    wanted = Defaults(tree, "9.8.7").resolve(KUBE, settings(chosen))
    assert [d.image for d in wanted if d.name == "pause"] == ["registry.k8s.io/pause:9.5"]


def test_the_extras_are_built_only_when_they_are_all_that_is_missing(tree, tmp_path, monkeypatch):
    from harness.kubespray import extras, readiness

    defaults = Defaults(tree, "9.8.7")
    wanted = defaults.resolve(KUBE, {"kube_network_plugin": "cni"})
    built = []

    def fake_ensure(todo, kit_record, progress, rebuild=False):  # what extras.ensure does, without Go
        for d in todo:
            f = Path(kit_record["files"]) / d.path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b"built\n")
            built.append(d.name)
    monkeypatch.setattr(extras, "ensure", fake_ensure)
    served_runc = lambda module, version: (module == "github.com/opencontainers/runc", "not available")  # noqa: E731

    record = kit(tmp_path / "a", defaults, leave_out=("runc", "crictl"))  # crictl: no recipe
    served, gaps = readiness.ensure_served(wanted, record | {"kubernetes": "v" + KUBE}, Progress(quiet=True),
                                           "9.8.7", proxy=served_runc)
    assert built == [] and not served.complete
    assert [(g.download.name, g.buildable) for g in gaps] == [("runc", True), ("crictl", None)]

    record = kit(tmp_path / "b", defaults, leave_out=("runc",))
    served, gaps = readiness.ensure_served(wanted, record | {"kubernetes": "v" + KUBE}, Progress(quiet=True),
                                           "9.8.7", proxy=served_runc)
    assert built == ["runc"] and served.complete and gaps == []


def test_a_reinstall_runs_the_play_again_and_after_a_built_cluster_resets_it_first(tree, tmp_path):
    defaults = Defaults(tree, "9.8.7")
    machines = (MachineDef(name="cp1", role="control-plane"),)
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines), install=install(tree))
    ctx = TRACK.context(scenario, FakeLab(), {"cp1": "control-plane"}, {}, kit(tmp_path, defaults), decide("qemu"),
                        workdir=tmp_path / "install")

    def make_step(machine, action, name, command, **kw):
        return (machine, action, name, kw.get("host"))

    after_a_stopped_play = TRACK.reinstall_steps(scenario.install, ctx, make_step, rebuild=False, new_ranges=False)
    assert [s[:3] for s in after_a_stopped_play] == [("host", "host-run", "kubespray: cluster.yml"),
                                                     ("cp1", "fetch", "admin.conf")]
    assert after_a_stopped_play[0][3] is ctx.command
    rebuilt = TRACK.reinstall_steps(scenario.install, ctx, make_step, rebuild=True, new_ranges=False)
    assert [s[2] for s in rebuilt] == ["kubespray: reset.yml", "kubespray: cluster.yml", "admin.conf"]
    # reset.yml's prompt is answered as kubespray documents (playbooks/reset.yml: reset_confirmation)
    assert rebuilt[0][3].argv[-3:] == ("-e", "reset_confirmation=yes", "reset.yml")
    assert rebuilt[0][3].env == ctx.command.env


def test_after_a_build_that_left_a_gap_the_gap_is_named_not_an_empty_list(tree, tmp_path, monkeypatch):
    from harness.kubespray import extras, readiness

    defaults = Defaults(tree, "9.8.7")
    wanted = defaults.resolve(KUBE, {"kube_network_plugin": "cni"})
    monkeypatch.setattr(extras, "ensure", lambda todo, files_root, progress, rebuild=False: {})  # built nothing
    record = kit(tmp_path, defaults, leave_out=("runc",))
    served, gaps = readiness.ensure_served(wanted, record | {"kubernetes": "v" + KUBE}, Progress(quiet=True), "9.8.7",
                                           proxy=lambda module, version: (True, ""))
    assert not served.complete and [g.download.name for g in gaps] == ["runc"]
    text = readiness.refusal(KUBE, "9.8.7", tree, wanted, served, gaps)
    assert "file runc: github.com/example/runc/releases/download/v2.1.0/runc.amd64\n      " in text


def test_the_preflight_refuses_a_variable_that_collides_with_the_offline_ones_before_any_machine(
        tree, tmp_path, monkeypatch):
    from harness.artifacts import prerequisites

    record = kit(tmp_path, Defaults(tree, "9.8.7"))
    monkeypatch.setattr(prerequisites, "ensure_kit", lambda version, progress: record | {"kubernetes": "v" + KUBE})
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=(
        MachineDef(name="cp1", role="control-plane"),)),
        install=install(tree, variables=(("docker_image_repo", "quay.example"),)))
    with pytest.raises(UsageError, match="install.variables: `docker_image_repo` is kubelab's to set"):
        TRACK.preflight(scenario, Progress(quiet=True))


def test_a_guest_image_without_python3_is_named_with_the_downloads_and_nothing_is_built(tree, tmp_path, monkeypatch):
    from harness.artifacts import prerequisites
    from harness.kubespray import extras, sources

    record = kit(tmp_path, Defaults(tree, "9.8.7"), leave_out=("runc",))  # runc: a recipe kubelab builds
    monkeypatch.setattr(prerequisites, "ensure_kit", lambda version, progress: record | {"kubernetes": "v" + KUBE})
    monkeypatch.setattr(sources, "proxy_answer", lambda module, version: (True, ""))
    monkeypatch.setattr(extras, "ensure", lambda *a, **kw: pytest.fail("built for a run the guests would stop"))
    # the plain debian recipe has no python3 (a stock guest stops at kubespray's first fact task)
    monkeypatch.setattr(TRACK, "guest_recipe", "debian")
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=(
        MachineDef(name="cp1", role="control-plane"),)), install=install(tree))
    with pytest.raises(UsageError) as err:
        TRACK.preflight(scenario, Progress(quiet=True))
    said = str(err.value)
    assert "file runc: github.com/example/runc/releases/download/v2.1.0/runc.amd64" in said
    assert ("kubespray's Ansible needs python3 in every guest, and the sid `debian` guest image has none "
            "(images/debian/packages.txt)") in said
    assert said.endswith("No machine was created.")


def test_kubespray_guests_boot_the_kubespray_recipe_which_has_python3(tree):
    from harness.scenario.labs import lab_spec, shape
    from harness.tracks.kubespray import _guest_problems

    machines = (MachineDef(name="cp1", role="control-plane"),)
    spray = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines), install=install(tree))
    kubeadm = replace(spray, install=InstallDef(track="kubeadm"))
    assert (lab_spec(spray, "sid", "a").recipe, lab_spec(kubeadm, "sid", "a").recipe) == ("kubespray", "debian")
    assert shape(lab_spec(spray, "sid", "a")) != shape(lab_spec(kubeadm, "sid", "a"))  # never one pooled lab
    assert _guest_problems(spray, TRACK.guest_recipe, tree) == []


def test_the_packages_kubespray_installs_are_read_from_the_checkout_per_suite(tree):
    from harness.kubespray.system_packages import wanted

    assert wanted(tree, "bookworm") == ["curl", "python3-apt", "gadget-tools"]  # Debian 12 only
    assert wanted(tree, "sid") == ["curl", "python3-apt"]
    assert wanted(tree, "sid", {"kube_proxy_mode": "widget"}) == ["curl", "python3-apt", "widget-proxy"]


def test_a_package_kubespray_installs_that_the_guest_image_lacks_is_named_before_any_machine(tree):
    from harness.tracks.kubespray import _guest_problems

    machines = (MachineDef(name="cp1", role="control-plane"),)
    on = lambda suite: Scenario(name="s", summary="s", lab=LabDef(suite=suite, machines=machines),
                                install=install(tree))
    assert _guest_problems(on("sid"), "kubespray", tree) == []
    said = _guest_problems(on("bookworm"), "kubespray", tree)
    assert said == ["kubespray's system_packages role installs gadget-tools on bookworm "
                    "(roles/system_packages/vars/main.yml), and the `kubespray` guest image lacks them "
                    "(images/debian/packages.txt, images/kubespray/packages.txt); a lab guest has no apt mirror: "
                    "add them to the recipe"]


def test_a_condition_kubelab_cannot_evaluate_is_refused_naming_the_package(tree):
    from harness.kubespray.system_packages import wanted

    listed = tree / "roles/system_packages/vars/main.yml"
    listed.write_text(listed.read_text() + "  odd:\n    - \"{{ lookup('env', 'X') }}\"\n")
    with pytest.raises(UsageError, match=r"main.yml: `odd`: a condition kubelab cannot evaluate"):
        wanted(tree, "sid")


def test_the_machines_versions_are_read_again_at_collect_for_kubespray_only(tree, tmp_path):
    from harness.probes.facts import COMMAND as FACTS

    defaults = Defaults(tree, "9.8.7")
    machines = (MachineDef(name="cp1", role="control-plane"), MachineDef(name="w1", role="worker"))
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines),
                        install=install(tree, schedulable_control_plane=True))
    roles = {"cp1": "control-plane", "w1": "worker"}
    ctx = TRACK.context(scenario, FakeLab(), roles, {}, kit(tmp_path, defaults), decide("qemu"), workdir=tmp_path)
    collect = [(s.machine, s.action, s.command) for s in plan(scenario, roles, {"cp1": {}, "w1": {}}, install=ctx)
               if s.phase == "collect"]
    assert collect[:2] == [("cp1", "machine-versions", FACTS), ("w1", "machine-versions", FACTS)]
    kubeadm = replace(scenario, install=InstallDef(track="kubeadm", kubernetes=KUBE))
    dry = TRACKS["kubeadm"].dry_context(kubeadm, None, decide("qemu"))
    assert not [s for s in plan(kubeadm, roles, {"cp1": {}, "w1": {}}, install=dry) if s.action == "machine-versions"]


def test_a_version_left_to_kubesprays_default_is_pinned_by_the_reinstall_and_refusals_run_first(tree, tmp_path):
    defaults = Defaults(tree, "9.8.7")
    machines = (MachineDef(name="cp1", role="control-plane"),)
    # the lab serves 1.40.0; kubespray's default is the newest of its tables, 1.40.1
    fault = install(tree, kubernetes_version_in_config=False, refused_versions=("1.41.0", "1.38.0"))
    fault = replace(fault, kubernetes="1.40.0")
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines), install=fault)
    ctx = TRACK.context(scenario, FakeLab(), {"cp1": "control-plane"}, {},
                        kit(tmp_path, defaults, version="1.40.0"), decide("qemu"), workdir=tmp_path / "install")
    steps = [s for s in plan(scenario, {"cp1": "control-plane"}, {"cp1": {}}, install=ctx) if s.phase == "install"]
    written = {Path(s.command).name: yaml.safe_load(s.content) for s in steps if s.action == "host-write"}
    assert "kube_version" not in written["vars.yml"]
    refusals = [s for s in steps if s.name.startswith("kubespray: cluster.yml, kube_version")]
    assert [(s.name, s.may_fail, s.host.argv[-3:]) for s in refusals] == [
        ("kubespray: cluster.yml, kube_version 1.41.0", True, ("-e", "kube_version=1.41.0", "cluster.yml")),
        ("kubespray: cluster.yml, kube_version 1.38.0", True, ("-e", "kube_version=1.38.0", "cluster.yml"))]
    assert steps.index(refusals[-1]) < steps.index(next(s for s in steps if s.name == "kubespray: cluster.yml"))

    def make_step(machine, action, name, command, **kw):
        return (machine, action, name, kw.get("content"))

    again = TRACK.reinstall_steps(fault, ctx, make_step, rebuild=False, new_ranges=False)
    assert [s[2] for s in again] == ["kubespray: vars.yml, kube_version pinned", "kubespray: cluster.yml", "admin.conf"]
    assert yaml.safe_load(again[0][3])["kube_version"] == "1.40.0"
    # a control run installs the kit's version, and refuses nothing
    control = [s for s in plan(scenario, {"cp1": "control-plane"}, {"cp1": {}}, install=ctx, control=True)
               if s.phase == "install"]
    vars_file = next(s for s in control if s.name == "kubespray: vars.yml")
    assert yaml.safe_load(vars_file.content)["kube_version"] == "1.40.0"
    assert not [s for s in control if "kube_version 1.4" in s.name or "kube_version 1.38" in s.name]


def test_a_version_to_refuse_that_kubespray_accepts_and_a_default_that_is_the_kits_are_refused(tree):
    with pytest.raises(UsageError, match=r"install.refused_versions: kubespray .* has 1.40.0 in its checksum tables, "
                                         r"so cluster.yml would install it"):
        TRACK.resolve(install(tree, refused_versions=("1.41.0", "1.40.0")))
    with pytest.raises(UsageError, match=r"leaves kube_version to kubespray .*'s default, 1.40.1, which is the kit's"):
        TRACK.resolve(install(tree, kubernetes_version_in_config=False))
    assert TRACK.resolve(replace(install(tree, kubernetes_version_in_config=False), kubernetes="1.40.0"))


def test_under_kvm_containerd_and_the_kubelet_keep_their_go_defaults(tree, tmp_path):
    defaults = Defaults(tree, "9.8.7")
    machines = (MachineDef(name="cp1", role="control-plane"),)
    scenario = Scenario(name="s", summary="s", lab=LabDef(suite="sid", machines=machines), install=install(tree))
    steps = {}
    for accel, tuned in (("tcg", decide("qemu")), ("kvm", decide("kvm", "kvm"))):
        ctx = TRACK.context(scenario, FakeLab(), {"cp1": "control-plane"}, {}, kit(tmp_path, defaults), tuned,
                            workdir=tmp_path / accel)
        steps[accel] = [s.name for s in plan(scenario, {"cp1": "control-plane"}, {"cp1": {}}, install=ctx)
                        if s.name.endswith("Go runtime settings")]
    assert steps == {"tcg": ["containerd Go runtime settings", "kubelet Go runtime settings"], "kvm": []}
