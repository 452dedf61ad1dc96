"""verify as a command and inside a scenario: its inputs refused before anything is
reached, its record, its plan steps; the SSH targets and their pinned keys."""

import base64
import json
import os
import subprocess
import sys

import paramiko
import pytest

from harness.errors import UsageError
from harness.paths import project_root
from harness.scenario.dryrun import plan_lines
from harness.scenario.load import load
from harness.verify.access import Unreachable, parse_ssh_targets, pinned_key, ssh_remotes
from harness.verify.finding import Finding
from harness.verify.session import row, verify

from .test_scenario_lint import lint


# -- inside a scenario ---------------------------------------------------------------------
TWO_NODES = """\
    apiVersion: kubelab/v1
    kind: Scenario
    name: bad
    summary: s
    import: [_common/kubeadm-two-nodes.yaml]
    verify:
      - name: dns
        probe: {dns: {}}
        equals: answered
      - {layers: %s}
"""


def _with_common(tmp_path):
    common = project_root() / "scenarios" / "_common"
    return {f"_common/{p.name}": p.read_text() for p in common.glob("*.yaml")}


def test_a_scenario_names_layers_after_its_checks(tmp_path):
    others = _with_common(tmp_path)
    assert lint(tmp_path, TWO_NODES % "all", others=others) == []
    scenario = load(tmp_path / "bad.yaml")
    assert [c.name for c in scenario.verify] == ["dns"]
    assert scenario.verify_layers == ("nodes", "etcd", "certificates", "dns", "records", "kube-system", "workload")
    lines = plan_lines(scenario, "sid")
    layer_lines = [l for l in lines if "verify layer" in l]
    assert [l.split("verify layer ")[1].split()[0] for l in layer_lines] == list(scenario.verify_layers)
    # after the scenario's own verify checks, before the collect phase
    assert lines.index(layer_lines[0]) > next(i for i, l in enumerate(lines) if "dns: equals 'answered'" in l)


def test_a_bad_layer_name_is_refused_with_file_line_and_field(tmp_path):
    problems = lint(tmp_path, TWO_NODES % "[nodes, etdc]", others=_with_common(tmp_path))
    assert problems == ["bad.yaml:10: verify[1].layers: etdc: not a layer; allowed: all, or any of nodes, etcd, "
                        "certificates, dns, records, kube-system, workload"]


def test_layers_need_a_cluster(tmp_path):
    text = """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: s
        lab: {suite: bookworm, machines: [{name: n1}]}
        verify:
          - {layers: all}
    """
    assert lint(tmp_path, text) == ["bad.yaml:7: verify[0].layers: the layers check a Kubernetes cluster; this "
                                    "scenario installs none (`install.track: none`)"]


# -- the command ------------------------------------------------------------------------------
def run_task(*args, env=None):
    return subprocess.run([sys.executable, "-m", "invoke", "-r", str(project_root()), "verify", *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


LAB_X = {"schema": "kubelab.lab/v1", "name": "x"}  # a lab state the option check finds (harness/lab.py)


@pytest.mark.parametrize("args,message", [
    ([], "give either --lab LAB or --kubeconfig FILE"),
    (["--lab", "x", "--kubeconfig", __file__], "give either --lab LAB or --kubeconfig FILE"),
    (["--lab", "x", "--known-hosts", __file__], "--ssh, --identity and --known-hosts go with --kubeconfig"),
    (["--kubeconfig", __file__], "--kubeconfig needs --ssh USER@HOST"),
    (["--kubeconfig", "/nonexistent"], "--kubeconfig '/nonexistent': no such file"),
    (["--lab", "x", "--layers", "nodes,etdc"], "--layers 'nodes,etdc': etdc: not a layer"),
])
def test_bad_input_exits_2_before_anything_is_reached(args, message, tmp_path):
    from harness.lab import STATE_SCHEMA

    lab = tmp_path / "home" / "labs" / "x"
    lab.mkdir(parents=True)
    (lab / "state.json").write_text(json.dumps(dict(LAB_X, schema=STATE_SCHEMA)))
    done = run_task(*args, env={"KUBELAB_RUNS": str(tmp_path / "runs"), "KUBELAB_HOME": str(tmp_path / "home")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()  # no run record: nothing started


def test_a_lab_that_does_not_exist_is_exit_2_with_the_labs_there_are(tmp_path):
    done = run_task("--lab", "no-such-lab", env={"KUBELAB_RUNS": str(tmp_path / "runs"),
                                                 "KUBELAB_HOME": str(tmp_path / "home")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--lab 'no-such-lab': no lab `no-such-lab`" in done.stderr and "labs: none" in done.stderr
    assert not (tmp_path / "runs").exists()  # refused with the options, before a record


def test_ssh_without_known_hosts_is_refused(tmp_path):
    key = tmp_path / "id"
    key.write_text("x")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    done = run_task("--kubeconfig", str(kubeconfig), "--ssh", "root@192.0.2.5", "--identity", str(key),
                    env={"KUBELAB_RUNS": str(tmp_path / "runs")})
    assert done.returncode == 2 and "--ssh needs --known-hosts FILE" in done.stderr
    assert not (tmp_path / "runs").exists()


# -- SSH targets and their keys ------------------------------------------------------------------
def test_ssh_targets():
    assert parse_ssh_targets("root@10.0.0.5, admin@10.0.0.6:2222") == [("root", "10.0.0.5", 22),
                                                                        ("admin", "10.0.0.6", 2222)]
    for bad in ("10.0.0.5", "root@", "root@h:port", ""):
        with pytest.raises(UsageError, match="--ssh"):
            parse_ssh_targets(bad)


def test_host_keys_come_only_from_known_hosts_plain_or_hashed(tmp_path):
    from harness.remote.keys import KeyPair

    kind, blob = KeyPair.generate("node").public_openssh.split()[:2]
    key = paramiko.PKey.from_type_string(kind, base64.b64decode(blob))
    known = paramiko.HostKeys()
    known.add("10.0.0.5", kind, key)
    known.add(paramiko.HostKeys.hash_host("[10.0.0.6]:2222"), kind, key)
    path = tmp_path / "known_hosts"
    known.save(str(path))
    assert pinned_key(path, "10.0.0.5", 22) == f"{kind} {blob}"
    assert pinned_key(path, "10.0.0.6", 2222) == f"{kind} {blob}"  # hashed entry
    with pytest.raises(UsageError, match="has no key for 10.0.0.7: add the node's host key"):
        pinned_key(path, "10.0.0.7", 22)
    identity = tmp_path / "id"
    identity.write_text("x")
    remotes = ssh_remotes("root@10.0.0.5", identity, path)
    assert remotes["10.0.0.5"].target.host_key == f"{kind} {blob}"


# -- the session ------------------------------------------------------------------------------------
def test_an_unreachable_cluster_ends_the_run_before_any_layer(tmp_path):
    def connect(record):
        raise Unreachable("node 192.0.2.5: no answer within 30s")

    out = []
    result = verify(connect, ("nodes",), runs_root=tmp_path, out=out.append)
    assert (result.exit_code, result.result) == (2, "error")
    assert result.reason == "cannot verify: node 192.0.2.5: no answer within 30s"
    data = json.loads((result.directory / "run.json").read_text())
    assert [p["name"] for p in data["phases"]] == ["prepare"] and data["observations"] == []
    assert out == []  # no table: nothing was checked


class Reads:
    """A stand-in access: what the layers would read, scripted."""

    def __init__(self, findings):
        self.findings, self.remotes, self.layer, self.cleaned = findings, {"cp1": None}, "", False

    def cleanup(self):
        self.cleaned = True
        return ["Deployment/kubelab-verify-web"]

    def prestart(self, layers):
        self.prestarted = tuple(layers)


def test_findings_become_observations_and_the_verdict(tmp_path, monkeypatch):
    from harness.verify import session

    found = [Finding("nodes", "cp1 Ready", "holds", "Ready=True", "API GET /api/v1/nodes"),
             Finding("nodes", "cp1", "recorded", "roles=control-plane", "API GET /api/v1/nodes"),
             Finding("dns", "dns-autoscaler", "not applicable", "no dns-autoscaler Deployment", "API"),
             Finding("dns", "CoreDNS answers", "does not hold", "no answer", "pod: nslookup", "timed out")]
    access = Reads(found)
    monkeypatch.setattr(session, "run_layers", lambda a, names, on_finding, on_error: [
        on_finding(f) for f in a.findings if f.layer in names])
    out = []
    result = verify(lambda record: (access, {"name": "lab1"}), ("nodes", "dns"), runs_root=tmp_path,
                    out=out.append)
    assert (result.exit_code, result.result) == (1, "not-met")
    assert result.reason == "1 check(s) do not hold: dns: CoreDNS answers"
    assert access.cleaned and access.prestarted == ("nodes", "dns")
    data = json.loads((result.directory / "run.json").read_text())
    obs = {o["check"]: o for o in data["observations"]}
    assert [o["met"] for o in data["observations"]] == [True, None, None, False]
    assert obs["dns: dns-autoscaler"]["matched"] == "not applicable: no dns-autoscaler Deployment"
    assert obs["dns: CoreDNS answers"]["verdict"] == "does not hold"
    assert (result.directory / obs["dns: CoreDNS answers"]["log"]).read_text().endswith("timed out\n")
    assert [p["name"] for p in data["phases"]] == ["prepare", "verify", "teardown"]
    assert data["verify"]["removed"] == ["Deployment/kubelab-verify-web"]
    assert out[0].split()[:5] == ["layer", "check", "verdict", "value", "source"]
    assert out[1] == row(found[0]) and "does not hold" in out[4]
