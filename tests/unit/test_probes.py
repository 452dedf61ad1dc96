"""Probe parsers on output captured from real bookworm, trixie and sid guests
(tests/fixtures/outputs/<suite>-<case>.json: command, exit code, stdout, stderr)."""


import pytest

from harness.probes import PROBES, make
from harness.probes.containerd import lookup, split_key
from harness.probes.facts import COMMAND as FACTS_COMMAND
from harness.probes.facts import numeric
from harness.probes.facts import parse as parse_facts
from harness.remote.result import CommandResult

from .captured import machine, output

V1 = 'plugins."io.containerd.grpc.v1.cri"'
V2 = 'plugins."io.containerd.cri.v1.runtime"'


captured = output  # a fixture's CommandResult


@pytest.mark.parametrize("suite", ["bookworm", "trixie", "sid"])
def test_sysctl_of_a_missing_module_key(suite):
    r = machine("sysctl", {"key": "net.bridge.bridge-nf-call-iptables"}, f"{suite}-sysctl-missing")
    assert r.value is None
    assert r.text == "sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory\n"


def test_sysctl_value():
    r = machine("sysctl", {"key": "net.ipv4.ip_forward"}, "bookworm-sysctl-present")
    assert (r.value, r.text) == ("0", "net.ipv4.ip_forward = 0\n")


def test_module_loaded_from_proc_modules():
    assert machine("module-loaded", {"module": "overlay"}, "bookworm-modules").value is True
    assert machine("module-loaded", {"module": "br_netfilter"}, "bookworm-modules").value is False
    r = machine("module-loaded", {"module": "virtio-blk"}, "bookworm-modules")  # dashes name the same module
    assert r.value is True and r.text.startswith("virtio_blk ")


def test_swaps():
    assert machine("swaps", {}, "sid-swaps-none").value == []
    r = machine("swaps", {}, "sid-swaps-active")
    assert r.value == ["/swapfile.kubelab"]


def test_unit_state():
    assert machine("unit-state", {"unit": "containerd"}, "bookworm-unit-state-containerd").value == "active"
    assert machine("unit-state", {"unit": "no-such-unit"}, "bookworm-unit-state-missing").value == "inactive"


def test_file_probes():
    assert machine("file-exists", {"path": "/proc/sys/net/bridge/bridge-nf-call-iptables"}, "bookworm-file-exists-absent").value is False
    r = machine("file-content", {"path": "/etc/modules-load.d/k8s.conf"}, "bookworm-file-content-missing")
    assert r.value is None and "No such file or directory" in r.text


def test_journal_counts_lines():
    r = machine("journal", {"unit": "containerd", "lines": 20}, "bookworm-journal-containerd")
    assert r.value == len(r.text.splitlines()) and 0 < r.value <= 20
    assert all(line.startswith("2026-") and " node1 " in line for line in r.text.splitlines())
    assert any(" containerd[" in line for line in r.text.splitlines())


@pytest.mark.parametrize("fixture,key,value", [
    ("bookworm-containerd-dump", f"{V1}.cni.bin_dir", "/usr/lib/cni"),
    ("bookworm-containerd-dump", f"{V1}.containerd.runtimes.runc.runtime_type", "io.containerd.runc.v2"),
    ("bookworm-containerd-dump", "version", 2),
    ("trixie-containerd-dump", f"{V1}.cni.bin_dir", "/usr/lib/cni"),
    ("sid-containerd-dump", "version", 3),
    ("sid-containerd-dump", f"{V2}.cni.bin_dirs", ["/usr/lib/cni"]),
    ("sid-containerd-dump", f"{V2}.containerd.runtimes.runc.options.SystemdCgroup", False),
    ("sid-containerd-dump", f"{V1}.cni", None),  # 2.x has no CNI settings under the old id
])
def test_containerd_config_dump_as_shipped(fixture, key, value):
    assert machine("containerd-config", {"key": key}, fixture).value == value


@pytest.mark.parametrize("suite,sentinel,systemd_cgroup_key,runtime_type", [
    # 1.x: the drop-in's CRI table replaced config.toml's: sentinel back to 16384, runtime_type lost
    ("bookworm", 16384, f"{V1}.containerd.runtimes.runc.options.SystemdCgroup", ""),
    ("trixie", 16384, f"{V1}.containerd.runtimes.runc.options.SystemdCgroup", ""),
])
def test_containerd_1x_dump_after_dropin(suite, sentinel, systemd_cgroup_key, runtime_type):
    fixture = f"{suite}-dropin-containerd-dump"
    assert machine("containerd-config", {"key": f"{V1}.max_container_log_line_size"}, fixture).value == sentinel
    assert machine("containerd-config", {"key": systemd_cgroup_key}, fixture).value is True
    assert machine("containerd-config", {"key": f"{V1}.containerd.runtimes.runc.runtime_type"}, fixture).value == runtime_type
    imports = machine("containerd-config", {"key": "imports"}, fixture)
    # every loaded file, the root included, in Go map order
    assert sorted(imports.value) == ["/etc/containerd/conf.d/50-kubelab.toml", "/etc/containerd/config.toml"]


def test_containerd_2x_dump_after_dropin_merges():
    fixture = "sid-dropin-containerd-dump"
    assert machine("containerd-config", {"key": f"{V2}.max_container_log_line_size"}, fixture).value == 12345
    r = machine("containerd-config", {"key": f"{V2}.containerd.runtimes.runc.options.SystemdCgroup"}, fixture)
    assert (r.value, r.text) == (True, f"{V2}.containerd.runtimes.runc.options.SystemdCgroup = true")
    assert machine("containerd-config", {"key": f"{V2}.containerd.runtimes.runc.runtime_type"}, fixture).value == "io.containerd.runc.v2"
    assert machine("containerd-config", {"key": "imports"}, fixture).value == ["/etc/containerd/conf.d/*.toml"]


def test_containerd_config_when_the_command_fails():
    probe = make("containerd-config", {"key": "version"})
    r = probe.parse(CommandResult("n", "containerd config dump", 1, "", "containerd: not found\n", 0, 0))
    assert r.value is None and r.text == "containerd: not found\n"


def test_dotted_keys():
    assert split_key(f'{V1}.cni.bin_dir') == ["plugins", "io.containerd.grpc.v1.cri", "cni", "bin_dir"]
    assert split_key("plugins.'io.containerd.cri.v1.runtime'.cni") == ["plugins", "io.containerd.cri.v1.runtime", "cni"]
    assert lookup({"a": {"b.c": 1}}, 'a."b.c"') == 1 and lookup({"a": 1}, "a.b") is None
    with pytest.raises(ValueError, match="not a TOML dotted key"):
        split_key("a..b")


@pytest.mark.parametrize("suite,expected", [
    ("bookworm", {"containerd": "1.6.20~ds1", "runc": "1.1.5+ds1", "systemd": "252.39-1~deb12u2",
                  "kernel": "6.1.0-50-cloud-amd64", "os": "Debian GNU/Linux 12 (bookworm)"}),
    ("trixie", {"containerd": "1.7.24~ds1", "runc": "1.1.15+ds1", "systemd": "257.13-1~deb13u1",
                "kernel": "6.12.117+deb13-cloud-amd64", "os": "Debian GNU/Linux 13 (trixie)"}),
    ("sid", {"containerd": "2.1.9+unknown", "runc": "1.3.6+ds1", "systemd": "262.1-1",
             "kernel": "7.2.13+deb14-cloud-amd64", "os": "Debian GNU/Linux forky/sid"}),
])
def test_facts(suite, expected):
    facts = parse_facts(captured(f"{suite}-facts"))
    assert {k: facts[k] for k in expected} == expected
    assert (facts["pid1"], facts["cgroupfs"]) == ("systemd", "cgroup2fs")


def test_facts_of_a_containerd_built_from_source():
    out = ("containerd=containerd github.com/containerd/containerd/v2 v2.2.9 \n"
           "runc=runc version 1.3.3+ds1\nsystemd=systemd 258 (258.2-1)\npid1=systemd\ncgroupfs=cgroup2fs\n")
    facts = parse_facts(CommandResult("node1", "facts", 0, out, "", 0.0, 0.1))
    assert (facts["containerd"], facts["runc"]) == ("2.2.9", "1.3.3+ds1")


def test_numeric_versions():
    assert numeric("1.6.20~ds1") == (1, 6, 20) and numeric("2.1") == (2, 1, 0) and numeric("") == ()


def test_command_probe_value_is_the_exit_code():
    r = make("command", {"cmd": "modprobe br_netfilter"}).parse(
        CommandResult("n", "modprobe br_netfilter", 1, "", "modprobe: ERROR: could not insert 'br_netfilter'\n", 0, 0))
    assert (r.value, r.text) == (1, "modprobe: ERROR: could not insert 'br_netfilter'\n")


def test_ca_cert_hash_is_the_sha256_of_the_public_key_info():
    """Against a certificate made here, hashed the way kubeadm's pubkeypin.Hash does."""
    import datetime
    import hashlib

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.datetime(2026, 12, 1, tzinfo=datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
            .sign(key, hashes.SHA256()))
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    cat = "cat /etc/kubernetes/pki/ca.crt"
    reading = make("ca-cert-hash", {}).parse(CommandResult("cp1", cat, 0, pem, "", 0.0, 0.1))
    assert reading.value == "sha256:" + hashlib.sha256(spki).hexdigest()
    missing = CommandResult("cp1", cat, 1, "", "cat: /etc/kubernetes/pki/ca.crt: No such file or directory\n", 0.0, 0.1)
    assert make("ca-cert-hash", {}).parse(missing).value is None


SID_WITH_PACKAGE = ("os=Debian GNU/Linux forky/sid\nkernel=7.2.13+deb14-cloud-amd64\n"
                    "containerd=containerd github.com/containerd/containerd/v2 2.1.9+unknown \n"
                    "containerd_package=2.1.9~ds1-1\nrunc=runc version 1.3.6+ds1\n"
                    "systemd=systemd 262 (262.1-1)\npid1=systemd\ncgroupfs=cgroup2fs\n")


def test_debian_containerd_is_named_by_its_package_version_not_plus_unknown():
    facts = parse_facts(CommandResult("node1", "facts", 0, SID_WITH_PACKAGE, "", 0.0, 0.1))
    assert (facts["containerd"], facts["containerd_reported"], facts["containerd_package"]) == \
        ("2.1.9~ds1-1", "2.1.9+unknown", "2.1.9~ds1-1")
    assert numeric(facts["containerd"]) == (2, 1, 9)  # version gates read the same release


def test_a_containerd_built_over_the_package_is_named_by_what_it_reports():
    built = SID_WITH_PACKAGE.replace("containerd/v2 2.1.9+unknown ", "containerd/v2 v2.2.9 abc123")
    facts = parse_facts(CommandResult("node1", "facts", 0, built, "", 0.0, 0.1))
    assert (facts["containerd"], facts["containerd_package"]) == ("2.2.9", "2.1.9~ds1-1")


def test_the_facts_command_asks_dpkg_for_the_package_version():
    assert "dpkg-query -W -f='${Version}' containerd" in FACTS_COMMAND


def kinds_parsed_from_captures(folder) -> set[str]:
    """The probe kinds some test in `folder` parses from captured output: a call of captured.py's
    machine(), cluster() or play() whose first argument is the kind, written out."""
    import ast

    kinds = set()
    for path in folder.glob("test_*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("machine", "cluster", "play"):
                    kinds.add(node.args[0].value)
    return kinds


def test_every_probe_kind_has_a_parser_test_on_captured_output():
    """A probe registered without a test that parses what a real guest or cluster said fails here,
    naming it (captures: tests/output_capture.py, tests/cluster_capture.py)."""
    from pathlib import Path

    lacking = sorted(set(PROBES) - kinds_parsed_from_captures(Path(__file__).parent))
    assert lacking == [], f"probe kinds with no parser test on captured output: {', '.join(lacking)}"
