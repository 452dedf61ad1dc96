"""kubelab's kubespray groundwork against the real checkout in KUBELAB_KUBESPRAY (-m kubespray).

Nothing here boots a machine or talks to one: the checkout is read, its venv (when
made) runs kubespray's own version gate on localhost and parses a generated inventory.
"""

import json
import re
import subprocess

import pytest
import yaml

from harness.errors import UsageError
from harness.kubespray import checkout, inventory, offline
from harness.kubespray.command import playbook_command
from harness.kubespray.downloads import CHECKSUMS_FILE, Defaults

pytestmark = pytest.mark.kubespray
SHA256 = re.compile(r"^[0-9a-f]{64}$")


@pytest.fixture(scope="module")
def defaults(ks):
    return Defaults(ks.path, ks.version)


@pytest.fixture(scope="module")
def table(ks):
    """The kubelet table read plainly (PyYAML), independently of kubelab's evaluator."""
    return {str(k): v for k, v in yaml.safe_load((ks.path / CHECKSUMS_FILE).read_text())["kubelet_checksums"]["amd64"].items()}


def test_the_checkout_is_valid_and_versioned(ks):
    assert checkout.missing(ks.path) == []
    assert ks.version and ks.version != "unknown"
    if (ks.path / ".git").exists():
        assert re.match(r"^[0-9a-f]{40}$", ks.commit) and ks.describe
    assert checkout.release(ks.ansible_min) < checkout.release(ks.ansible_max)


def test_the_default_version_and_its_downloads(ks, defaults, table):
    default = defaults.default_kube_version()
    assert default == next(iter(table))  # kubespray's kube_version: the first key of kubelet_checksums.amd64
    assert default in defaults.supported_versions()
    got = {d.name: d for d in defaults.resolve(None, {"kube_network_plugin": "flannel", "container_manager": "containerd"})}
    for tool in ("kubeadm", "kubelet", "kubectl"):
        assert got[tool].path == f"dl.k8s.io/release/v{default}/bin/linux/amd64/{tool}"
    assert "sha256:" + got["kubelet"].sha256 == table[default]
    files = [d for d in got.values() if d.kind == "file"]
    images = [d for d in got.values() if d.kind == "image"]
    assert {"etcd", "cni", "crictl", "runc", "containerd", "nerdctl"} <= set(got)
    assert {"flannel", "pod_infra", "coredns", "kubeadm_kube_apiserver"} <= set(got)
    for d in files:
        assert SHA256.match(d.sha256) and d.table and d.version and "{" not in d.url, d
    for d in images:
        assert d.repo and d.tag and "{" not in d.image, d


def test_a_version_outside_the_table_is_refused_by_name(ks, defaults, table):
    major, minor, patch = next(iter(table)).split(".")
    absent = f"{major}.{minor}.{int(patch) + 1}"
    assert absent not in table
    with pytest.raises(UsageError) as info:
        defaults.resolve(absent)
    assert f"Kubernetes {absent} is not in kubespray {ks.version}'s checksum tables" in str(info.value)


def test_the_offline_vars_send_every_download_to_the_lab(defaults):
    v = defaults.default_kube_version()
    ev = offline.extra_vars(defaults, v, "http://192.168.100.1:8080", "192.168.100.1:5000",
                            {"kube_network_plugin": "flannel"})
    got = defaults.resolve(v, ev)
    sums = offline.checksum_tables(defaults, got, {"kubeadm": "1" * 64})
    for d in defaults.resolve(v, {**ev, **sums}):
        if d.kind == "file":
            assert d.url.startswith("http://192.168.100.1:8080/"), d
        else:
            assert d.repo.startswith("192.168.100.1:5000/"), d
        if d.name == "kubeadm":
            assert d.sha256 == "1" * 64


def test_the_venvs_ansible_passes_kubesprays_own_gate(ks, made_venv):
    out = subprocess.run([str(made_venv.bin("ansible-playbook")), "--version"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    checkout.check_ansible(ks, checkout.ansible_core_version(out))
    # kubespray's gate play itself, on localhost only (its asserts: ansible-core's range, netaddr)
    play = subprocess.run([str(made_venv.bin("ansible-playbook")), "-i", "localhost,", "-c", "local",
                           "playbooks/ansible_version.yml"], cwd=ks.path, capture_output=True, text=True,
                          timeout=300, env={"PATH": f"{made_venv.path / 'bin'}:/usr/bin:/bin",
                                            "ANSIBLE_CONFIG": str(ks.path / "ansible.cfg"), "HOME": "/root"})
    assert play.returncode == 0, play.stdout[-2000:] + play.stderr[-2000:]
    assert re.search(r"localhost\s+: ok=2\s+changed=0\s+unreachable=0\s+failed=0", play.stdout), play.stdout


def test_ansible_inventory_reads_the_generated_inventory(ks, made_venv, tmp_path):
    hosts = inventory.hosts_from_roles([("cp1", "192.168.100.10", "control-plane"),
                                        ("w1", "192.168.100.11", "worker")], schedulable_control_plane=True)
    inv = tmp_path / "inventory.yml"
    inv.write_text(inventory.inventory_yaml(hosts, tmp_path / "id_ed25519"))
    (tmp_path / "known_hosts").write_text(inventory.known_hosts(hosts, lambda n: f"ssh-ed25519 AAAA{n}"))
    cmd = playbook_command(venv_bin=made_venv.path / "bin", checkout=ks.path, inventory=inv,
                           vars_file=tmp_path / "vars.yml", checksums_file=tmp_path / "checksums.yml",
                           known_hosts=tmp_path / "known_hosts", fact_cache=tmp_path / "facts",
                           control_dir=tmp_path / "cp")
    out = subprocess.run([str(made_venv.bin("ansible-inventory")), "-i", str(inv), "--list"], cwd=ks.path,
                         env=cmd.environment(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    assert listed["_meta"]["hostvars"]["cp1"]["ansible_host"] == "192.168.100.10"
    assert listed["_meta"]["hostvars"]["w1"]["ansible_user"] == "root"
    assert listed["kube_control_plane"]["hosts"] == ["cp1"] and listed["etcd"]["hosts"] == ["cp1"]
    assert sorted(listed["kube_node"]["hosts"]) == ["cp1", "w1"]
    assert set(listed["k8s_cluster"]["children"]) == {"kube_control_plane", "kube_node"}


def test_the_play_log_reads_real_ansible_output_under_kubesprays_config(ks, made_venv, tmp_path):
    """A play of the test's own on localhost, run as kubespray's would be (its ansible.cfg, the
    venv, the host command): the live line, task times, the recap and a failure with its message."""
    from harness.host_command import HostCommand, run
    from harness.kubespray.play_log import PlayLog

    (tmp_path / "play.yml").write_text("""\
- name: kubelab's own play
  hosts: all
  gather_facts: false
  tasks:
    - name: Wait a little
      command: sleep 1
    - name: Fail on purpose
      command: sh -c 'echo no such file >&2; exit 3'
      ignore_errors: true
    - name: Stop here
      fail:
        msg: the expected failure
""")
    cmd = playbook_command(venv_bin=made_venv.path / "bin", checkout=ks.path, inventory=tmp_path / "hosts",
                           vars_file=tmp_path / "vars.yml", checksums_file=tmp_path / "checksums.yml",
                           known_hosts=tmp_path / "known_hosts", fact_cache=tmp_path / "facts",
                           control_dir=tmp_path / "cp", playbook=str(tmp_path / "play.yml"))
    (tmp_path / "hosts").write_text("localhost ansible_connection=local ansible_python_interpreter=" +
                                    str(made_venv.bin("python")) + "\n")
    for name in ("vars.yml", "checksums.yml"):
        (tmp_path / name).write_text("{}\n")
    play = PlayLog()
    lines = []
    result = run(HostCommand(cmd.argv, cmd.cwd, cmd.env, cmd.path_prefix, cmd.output), 300,
                 on_line=lambda line: (play.feed(line), lines.append(play.live())))
    play.finish()
    assert result.exit_code == 2, result.stdout[-2000:]
    assert [t.name for t in play.tasks] == ["Wait a little", "Fail on purpose", "Stop here"]
    assert play.tasks[0].seconds >= 1.0
    assert [(f.task, f.host, f.ignored) for f in play.failures] == [("Fail on purpose", "localhost", True),
                                                                    ("Stop here", "localhost", False)]
    assert play.failures[0].message == "non-zero return code: no such file" and play.failures[1].message == "the expected failure"
    # ansible's own recap, as read: the ignored command failure counts as ok and changed there
    assert play.recap["localhost"] == {"ok": 2, "changed": 2, "unreachable": 0, "failed": 1, "skipped": 0,
                                       "rescued": 0, "ignored": 1}
    assert any("kubelab's own play: Stop here | localhost ok=2 changed=1 failed=1 |" in line for line in lines)


def test_every_variable_kubelab_sets_for_tcg_is_one_kubespray_defines(ks):
    """A misspelt variable is silently ignored by Ansible: each name kubelab sets must be a
    role default of this checkout (roles/**/defaults), the place kubespray documents it."""
    from harness.kubespray.tcg import variables
    from harness.tuning import decide

    defined = set()
    for f in ks.path.glob("roles/**/defaults/**/*.yml"):
        data = yaml.safe_load(f.read_text())
        if isinstance(data, dict):
            defined |= set(data)
    wanted = variables(decide("qemu"))
    assert wanted and sorted(set(wanted) - defined) == []


@pytest.mark.parametrize("suite", ["bookworm", "trixie", "sid"])
def test_the_kubespray_guest_image_holds_every_package_the_checkout_installs(ks, suite):
    """What roles/system_packages/vars/main.yml wants on a Debian guest of each suite is in the
    recipe (the lab has no apt mirror); on Debian 12 that includes the packages the reference run
    saw apt install (kubespray-offline.md: apparmor ... xfsprogs, with ipvsadm for ipvs)."""
    from harness.images.recipe import Recipe
    from harness.kubespray.system_packages import wanted

    want = wanted(ks.path, suite, {"container_manager": "containerd"})
    assert "python3-apt" in want and "ipvsadm" in want  # Debian, and kube_proxy_mode ipvs by default
    if suite == "bookworm":
        assert {"mergerfs", "gnupg", "software-properties-common"} <= set(want)
    assert [p for p in want if p not in Recipe.named("kubespray", suite).packages()] == []


def test_the_checkout_refuses_the_airgap_scenarios_versions_with_its_signatures_before_any_guest(
        ks, made_venv, tmp_path):
    """kubespray-airgap-version's `refused_versions`, each played as the track plays it (the checkout's
    cluster.yml, `-e kube_version=V`) against an inventory whose host is this machine's loopback on a
    port nothing listens on: validate_inventory must stop the play before any connection, with the
    line the scenario expects."""
    from pathlib import Path

    from harness.host_command import HostCommand, run
    from harness.kubespray.play_log import PlayLog
    from harness.model import HOST
    from harness.probes import make
    from harness.scenario.checks import match
    from harness.scenario.load import load

    scenario = load(Path(__file__).resolve().parents[2] / "scenarios" / "kubespray-airgap-version.yaml")
    hosts = inventory.hosts_from_roles([("cp1", "127.0.0.1", "control-plane")], schedulable_control_plane=True)
    inv = tmp_path / "inventory.yml"
    written = yaml.safe_load(inventory.inventory_yaml(hosts, tmp_path / "id_ed25519"))
    written["all"]["hosts"]["cp1"]["ansible_port"] = 9  # discard: nothing listens there
    inv.write_text(yaml.safe_dump(written))
    for name in ("vars.yml", "checksums.yml", "known_hosts"):
        (tmp_path / name).write_text("{}\n" if name.endswith(".yml") else "")
    plays = []
    for version in scenario.install.refused_versions:
        cmd = playbook_command(venv_bin=made_venv.path / "bin", checkout=ks.path, inventory=inv,
                               vars_file=tmp_path / "vars.yml", checksums_file=tmp_path / "checksums.yml",
                               known_hosts=tmp_path / "known_hosts", fact_cache=tmp_path / f"facts-{version}",
                               control_dir=tmp_path / "cp", extra=(f"kube_version={version}",))
        play = PlayLog()
        result = run(HostCommand(cmd.argv, cmd.cwd, cmd.env, cmd.path_prefix, cmd.output), 300,
                     on_line=play.feed)
        play.finish()
        assert result.exit_code == 2, result.stdout[-2000:]
        assert play.recap["cp1"]["unreachable"] == 0  # stopped before any guest work
        plays.append(play.summary())
    refusals = [c for c in scenario.expect if c.target == HOST and c.name.endswith("-refused")]
    assert len(refusals) == 2
    for c in refusals:
        reading, _ = make(c.probe.kind, c.probe.args).observe(plays, "")
        assert match(c, reading)[0], (c.name, reading.text)
