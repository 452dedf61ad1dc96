"""Scenario lint: malformed files -> the exact problems, with file, line and field path.

Every case writes a scenario to tmp_path (its `name` matches the file stem) and
compares the full problem list. Paths in problems are made relative to
tmp_path; tmp_path itself, where a message names a directory, reads `<tmp>`.
A missing key is reported at the first line of the mapping that lacks it.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.faults import FAULTS
from harness.paths import project_root
from harness.probes import PROBES
from harness.errors import ScenarioError
from harness.scenario.files import all_files
from harness.scenario.load import load, load_into

FAULT_KINDS = ", ".join(FAULTS)
PROBE_KINDS = ", ".join(PROBES)
TOP_KEYS = "apiVersion, kind, name, summary, lab, install, faults, expect, recover, verify, observe, evidence, facts, ci"
MACHINE_NAME_RULE = "a name of lowercase letters, digits and single dashes, at most 15 characters"
ONE_MATCHER = "allowed: exactly one of pattern, absent, count, equals"


def _relative(problem: str, tmp_path: Path) -> str:
    for base in (tmp_path.resolve(), tmp_path):
        problem = problem.replace(f"{base}/", "").replace(str(base), "<tmp>")
    return problem


def lint(tmp_path: Path, text: str, file: str = "bad.yaml", others: dict | None = None) -> list[str]:
    """Write `file` (and the files it imports), load it, return its problems."""
    for rel, body in {**(others or {}), file: text}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body))
    try:
        load(tmp_path / file)
    except ScenarioError as exc:
        return [_relative(p, tmp_path) for p in exc.problems]
    return []


def case(id_: str, text: str, *problems: str, file: str = "bad.yaml", others: dict | None = None):
    return pytest.param(text, list(problems), file, others or {}, id=id_)


CASES = [
    # -- the file itself ------------------------------------------------------
    case("yaml-syntax-error", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: one: two
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:4: YAML syntax: mapping values are not allowed here"),
    case("duplicate-key", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines: [{name: node1}]
          suite: trixie
        """,
         "bad.yaml:8: lab.suite: duplicate key `suite`"),
    case("top-level-is-a-list", """\
        # a list, not a mapping
        - apiVersion: kubelab/v1
        - kind: Scenario
        """,
         "bad.yaml:2: (top level): found a list; allowed: a mapping of scenario fields"),
    case("empty-file", "",
         "bad.yaml:1: (top level): found nothing; allowed: a mapping of scenario fields"),
    # -- top-level fields -----------------------------------------------------
    case("missing-apiVersion", """\
        # no apiVersion
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:2: (top level): missing required key `apiVersion`"),
    case("wrong-apiVersion", """\
        apiVersion: kubelab/v2
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:1: apiVersion: found 'kubelab/v2'; allowed: kubelab/v1"),
    case("wrong-kind", """\
        apiVersion: kubelab/v1
        kind: Lab
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:2: kind: found 'Lab'; allowed: Scenario"),
    case("unknown-top-level-key", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        author: someone
        """,
         f"bad.yaml:6: author: unknown key `author`; allowed: {TOP_KEYS}"),
    case("name-not-file-name", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: other
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:3: name: found 'other'; allowed: 'bad' (the name must match the file name)"),
    case("name-not-kebab-case", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: Bad_Name
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "Bad_Name.yaml:3: name: found 'Bad_Name'; allowed: a kebab-case name (lowercase letters, digits, dashes)",
         file="Bad_Name.yaml"),
    case("missing-summary", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:1: (top level): missing required key `summary`"),
    case("claims-on-the-scenario", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        claims: [H1]
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         f"bad.yaml:5: claims: unknown key `claims`; allowed: {TOP_KEYS} (a claim id goes on the checks that prove "
         "it (`claims: [K8]` on an expect, verify or observe check); the scenario's list is derived from them)"),
    case("bad-claim-id-on-a-check", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        expect:
          - {name: one, claims: [H1, 9X, {id: H2}], probe: {swaps: {}}, equals: []}
        """,
         "bad.yaml:7: expect[0].claims[1]: found '9X'; allowed: a claim id like H1, K8 or NET3 (letters, digits, "
         "- and _)",
         "bad.yaml:7: expect[0].claims[2]: found a mapping; allowed: a claim id like H1, K8 or NET3 (letters, "
         "digits, - and _)"),
    case("unknown-install-track", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: helm
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:5: install: found 'helm'; allowed: none, or a mapping with track: kubeadm, kubespray"),
    case("install-track-as-a-bare-word", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: kubeadm
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:5: install: found 'kubeadm'; allowed: none, or a mapping like {track: kubeadm, kubernetes: <version>}"),
    # each track takes its own install keys; another track's key is named as such
    case("kubeadm-key-on-the-kubespray-track", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray, preload: false, schedulable_control_plane: yes please}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """,
         "bad.yaml:5: install.preload: unknown key `preload`; allowed: track, kubernetes, pod_cidr, service_cidr, "
         "cni, kubespray, schedulable_control_plane, play_fails, variables, kubernetes_version_in_config, "
         "refused_versions, repairs_faults (a key of the kubeadm track)",
         "bad.yaml:5: install.schedulable_control_plane: found 'yes please'; allowed: true or false"),
    # the install undoes the faults itself: no recovery, and then none may be given
    case("kubespray-repairs-faults-with-a-recovery-too", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray, repairs_faults: true}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        faults: [{kind: module-unloaded}]
        expect: [{name: e, probe: {module-loaded: {module: br_netfilter}}, equals: true}]
        recover: [{name: r, recover_faults: true}]
        """,
         "bad.yaml:5: install.repairs_faults: says the install undoes the faults itself: give faults, and no "
         "`recover` section"),
    case("faults-without-recovery-name-repairs-faults", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        faults: [{kind: module-unloaded}]
        expect: [{name: e, probe: {module-loaded: {module: br_netfilter}}, equals: true}]
        """,
         "bad.yaml:1: recover: a scenario with faults needs a recovery: a `run` step or `recover_faults: true` "
         "(or `install.repairs_faults: true`, where the install is to undo them itself)"),
    case("kubespray-refused-versions-not-a-list-of-versions", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray, refused_versions: [1.33]}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """,
         "bad.yaml:5: install.refused_versions[0]: found 1.33; allowed: a list of Kubernetes versions as strings, "
         'like ["1.33.0"]'),
    # install.variables: any kubespray variable but those kubelab sets (and where to say it instead)
    case("kubespray-variables-kubelab-sets-or-not-names", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install:
          track: kubespray
          variables: {enable_nodelocaldns: false, kube_pods_subnet: 10.99.0.0/16, 2fast: 1}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """,
         "bad.yaml:7: install.variables.kube_pods_subnet: `kube_pods_subnet` is kubelab's to set: use install.pod_cidr",
         "bad.yaml:7: install.variables.2fast: `2fast` is not an Ansible variable name (letters, digits, _; "
         "not first a digit)"),
    case("kubespray-variables-not-a-mapping", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray, variables: [enable_nodelocaldns]}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """,
         "bad.yaml:5: install.variables: found a list; allowed: a mapping of kubespray variables, "
         "like {enable_nodelocaldns: false}"),
    case("kubespray-key-on-the-kubeadm-track", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm, kubespray: ../kubespray}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """,
         "bad.yaml:5: install.kubespray: unknown key `kubespray`; allowed: track, kubernetes, pod_cidr, "
         "service_cidr, cni, prepare, kubernetes_version_in_config, preload, init_fails, kubelet_health_check, "
         "kubernetes_api_call (a key of the kubespray track)"),
    # kubespray's failure as an expectation: a valid regex, and nothing after the play that needs a cluster
    case("ansible-failure-with-a-broken-regex-and-a-point-kubespray-lacks", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray, play_fails: true}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        expect:
          - {name: failed, probe: {ansible-failure: {task: "(Download"}}, equals: 1}
          - {name: early, at: before-cni, probe: {ansible-failure: {}}, equals: 0}
          - {name: ready, probe: {node-ready: {}}, equals: 1}
        verify:
          - {layers: all}
        """,
         "bad.yaml:8: expect[0].probe.ansible-failure.task: found '(Download'; allowed: a valid regular expression "
         "(missing ), unterminated subpattern at position 0)",
         "bad.yaml:9: expect[1].at: found 'before-cni'; points inside the install exist only on the kubeadm track",
         "bad.yaml:10: expect[2].target: a play the fault stops (`install.play_fails`) leaves no cluster to check "
         "before the recovery; check the host's play or the machines",
         "bad.yaml:11: verify: a play the fault stops (`install.play_fails`) leaves no cluster for the verify "
         "layers; add a recovery step `reinstall: true` (the play again)"),
    case("kubespray-reinstalls-with-its-own-ranges", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubespray, play_fails: true}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        expect:
          - {name: failed, probe: {ansible-failure: {}}, equals: 1}
        recover:
          - {name: again, reinstall: {pod_cidr: 10.99.0.0/16}}
        verify:
          - {layers: all}
        observe:
          - {name: nodes, probe: {node-ready: {}}}
        """,
         # observe runs before the recovery too: no cluster then
         "bad.yaml:14: observe[0].target: a play the fault stops (`install.play_fails`) leaves no cluster to "
         "check before the recovery; check the host's play or the machines",
         "bad.yaml:10: recover[0].reinstall: the kubespray track reinstalls with the install section's ranges; "
         "other pod_cidr/service_cidr here are not supported yet"),
    case("command-equals-compares-the-exit-code", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        expect:
          - name: kubelet-active
            probe: {command: {cmd: systemctl is-active kubelet}}
            equals: active
        """,
         "bad.yaml:9: expect[0].equals: found 'active'; a `command` probe's value is its exit code (an integer); "
         "match its output with `pattern`"),
    case("an-init-meant-to-fail-needs-a-reinstall", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm, init_fails: true, kubelet_health_check: 4 minutes}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        recover:
          - {name: fix, run: "swapoff -a"}
        """,
         "bad.yaml:5: install.kubelet_health_check: found '4 minutes'; allowed: a duration like 40s or 1m30s",
         "bad.yaml:7: recover: `install.init_fails: true` needs a recovery step `reinstall: true` "
         "(kubeadm reset, then init, joins and CNI again)"),
    case("a-reinstall-needs-a-track-that-reinstalls-and-real-ranges", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        recover:
          - {name: again, reinstall: true, versions: {containerd: "about two"}}
          - {name: other, reinstall: {pod_cidr: 172.20.0.0/33, dns: x}}
          - {name: third, reinstall: yes please}
        """,
         "bad.yaml:7: recover[0].versions.containerd: found 'about two'; allowed: comparisons like '>=1.7', '<2.0' "
         "or '>=1.7,<2.0'",
         "bad.yaml:8: recover[1].reinstall.dns: unknown key `dns`; allowed: pod_cidr, service_cidr",
         "bad.yaml:8: recover[1].reinstall.pod_cidr: found '172.20.0.0/33'; allowed: an IPv4 network like 172.20.0.0/16",
         "bad.yaml:9: recover[2].reinstall: found 'yes please'; allowed: true, or a mapping of pod_cidr and "
         "service_cidr to rebuild with",
         "bad.yaml:7: recover[0].reinstall: allowed only with a track that reinstalls (kubeadm or kubespray); "
         "this scenario's is `none`",
         "bad.yaml:8: recover[1].reinstall: allowed only with a track that reinstalls (kubeadm or kubespray); "
         "this scenario's is `none`",
         "bad.yaml:9: recover[2].reinstall: allowed only with a track that reinstalls (kubeadm or kubespray); "
         "this scenario's is `none`"),
    case("an-api-call-timeout-is-for-an-init-the-fault-stops", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm, kubernetes_api_call: 1m0s}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """,
         "bad.yaml:5: install.kubernetes_api_call: applies only to an init the fault stops; set `init_fails` too, "
         "or leave it out (the track's value holds: harness/tuning.py)"),
    case("a-kubernetes-gate-needs-kubernetes", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
            versions: {kubernetes: '>=1.36'}
        recover:
          - {name: fix, run: "sysctl -w net.ipv4.ip_forward=1", versions: {kubernetes: '<1.36'}}
        """,
         "bad.yaml:10: verify[0].versions.kubernetes: this scenario installs no Kubernetes (`install.track: none`); "
         "gate on containerd, runc, kernel or systemd",
         "bad.yaml:12: recover[0].versions.kubernetes: this scenario installs no Kubernetes (`install.track: none`); "
         "gate on containerd, runc, kernel or systemd"),
    case("init-fails-takes-true-or-a-version-range", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm, init_fails: sometimes}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        recover:
          - {name: again, reinstall: true}
        """,
         "bad.yaml:5: install.init_fails: found 'sometimes'; allowed: true, false, or a version range like "
         "{containerd: \"<2.0\"} where init is expected to stop"),
    case("kubeadm-track-needs-one-control-plane", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm, kubernetes: 1.36.3, pod_cidr: 10.244.0.0/33}
        lab:
          suite: sid
          machines: [{name: node1, role: worker}, {name: node2, role: node}]
        """,
         "bad.yaml:5: install.pod_cidr: found '10.244.0.0/33'; allowed: an IPv4 network like 10.244.0.0/16",
         "bad.yaml:8: lab.machines: the kubeadm track needs exactly one machine with role control-plane; found 0",
         "bad.yaml:8: lab.machines: the kubeadm track takes roles control-plane and worker; node2 has another"),
    case("kubeadm-track-unserved-minor", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm, kubernetes: 1.30.1, cni: weave, prepare: [swap]}
        lab: {suite: sid, machines: [{name: cp, role: control-plane}]}
        """,
         "bad.yaml:5: install.kubernetes: found '1.30.1'; kubelab builds Kubernetes 1.34, 1.35, 1.36, 1.37",
         "bad.yaml:5: install.cni: found 'weave'; allowed: flannel, calico, none",
         "bad.yaml:5: install.prepare: found a list; allowed: a list of ip_forward, br_netfilter (or [])"),
    case("ci-not-a-boolean", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        install: {track: kubeadm}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        ci: sometimes
        """,
         "bad.yaml:7: ci: found 'sometimes'; allowed: true or false"),
    case("ci-on-a-host-scenario", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        ci: true
        """,
         "bad.yaml:6: ci: CI runs every host scenario already; `ci` chooses among the scenarios that install "
         "Kubernetes (leave it out)"),
    case("lab-network-not-a-private-24", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: sid, backend: docker, network: 8.8.8.0/24, machines: [{name: node1, role: master}]}
        """,
         "bad.yaml:5: lab.machines[0].role: found 'master'; allowed: control-plane, worker, node",
         "bad.yaml:5: lab.backend: found 'docker'; allowed: libvirt, vagrant",
         "bad.yaml:5: lab.network: found '8.8.8.0/24'; allowed: a private IPv4 /24, like 10.244.1.0/24"),
    case("lab-containerd-not-a-built-release", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: sid, containerd: 2.3, machines: [{name: node1}]}
        """,
         'bad.yaml:5: lab.containerd: found 2.3; allowed: a release like "2.2.9" (2.2 to 2.4, quoted)'),
    case("lab-containerd-on-another-suite", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: trixie, containerd: "2.2.9", machines: [{name: node1}]}
        """,
         "bad.yaml:5: lab.containerd: a containerd built from source goes into the sid image; "
         "this lab's suite is 'trixie'"),
    # -- lab ------------------------------------------------------------------
    case("lab-missing", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        """,
         "bad.yaml:1: (top level): missing required key `lab`"),
    case("unknown-suite", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: buster
          machines: [{name: node1}]
        """,
         "bad.yaml:6: lab.suite: found 'buster'; allowed: bookworm, trixie, sid"),
    # a missing key is reported at its parent's `key:` line
    case("lab-without-suite", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          machines: [{name: node1}]
        """,
         "bad.yaml:5: lab: missing required key `suite`"),
    case("empty-machines", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines: []
        """,
         "bad.yaml:7: lab.machines: found an empty list; allowed: at least one machine"),
    case("machines-not-a-list", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines: {name: node1}
        """,
         "bad.yaml:7: lab.machines: found a mapping; allowed: a list"),
    case("machines-empty-value", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
        """,
         "bad.yaml:7: lab.machines: found nothing; allowed: at least one machine"),
    case("suite-not-a-string", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: [bookworm]
          machines: [{name: node1}]
        """,
         "bad.yaml:6: lab.suite: found a list; allowed: bookworm, trixie, sid"),
    case("duplicate-machine-names", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
            - name: node1
            - name: node1
        """,
         "bad.yaml:9: lab.machines[1].name: duplicate machine name `node1`"),
    case("bad-machine-name", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
            - name: Node_1
        """,
         f"bad.yaml:8: lab.machines[0].name: found 'Node_1'; allowed: {MACHINE_NAME_RULE}"),
    case("machine-without-name", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
            - role: node
        """,
         "bad.yaml:8: lab.machines[0]: missing required key `name`"),
    case("cpus-zero", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
            - name: node1
              cpus: 0
        """,
         "bad.yaml:9: lab.machines[0].cpus: found 0; allowed: an integer at least 1"),
    case("memory-too-small", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
            - name: node1
              memory: 128
        """,
         "bad.yaml:9: lab.machines[0].memory: found 128; allowed: an integer at least 256"),
    case("unknown-machine-key", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab:
          suite: bookworm
          machines:
            - name: node1
              disk: 10
        """,
         "bad.yaml:9: lab.machines[0].disk: unknown key `disk`; allowed: name, role, cpus, memory"),
    # -- faults ---------------------------------------------------------------
    case("unknown-fault-kind", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: kernel-panic
        expect:
          - name: module-absent
            probe: {module-loaded: {module: br_netfilter}}
            equals: false
        recover:
          - {name: fix, recover_faults: true}
        """,
         f"bad.yaml:7: faults[0].kind: found 'kernel-panic'; allowed: {FAULT_KINDS}"),
    case("fault-kind-not-a-string", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: [swap-on]
        """,
         f"bad.yaml:7: faults[0].kind: found a list; allowed: {FAULT_KINDS}"),
    case("fault-without-kind", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - target: node1
        """,
         "bad.yaml:7: faults[0]: missing required key `kind`"),
    case("unknown-fault-param", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: module-missing
            params:
              module: br_netfilter
              modul: overlay
        expect:
          - name: module-absent
            probe: {module-loaded: {module: br_netfilter}}
            equals: false
        recover:
          - {name: fix, recover_faults: true}
        """,
         "bad.yaml:10: faults[0].params.modul: unknown parameter `modul` of fault `module-missing`; "
         "allowed: module, persist_file"),
    case("wrong-fault-param-type", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: module-missing
            params: {module: 5}
        expect:
          - name: module-absent
            probe: {module-loaded: {module: br_netfilter}}
            equals: false
        recover:
          - {name: fix, recover_faults: true}
        """,
         "bad.yaml:8: faults[0].params.module: found 5; allowed: a string"),
    case("missing-required-fault-param", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: sysctl-value
            params: {key: net.ipv4.ip_forward, value: "0"}
        expect:
          - name: forwarding-off
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "0"
        recover:
          - {name: fix, recover_faults: true}
        """,
         "bad.yaml:8: faults[0].params: missing required parameter `good` of fault `sysctl-value`"),
    case("bad-fault-phase", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: swap-on
            phase: after-install
        expect:
          - name: swap-active
            probe: {swaps: {}}
            pattern: swapfile
        recover:
          - {name: fix, recover_faults: true}
        """,
         "bad.yaml:8: faults[0].phase: found 'after-install'; allowed: before-install, before-init, before-cni"),
    case("target-unknown-machine", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: swap-on
            target: "@node2"
        expect:
          - name: swap-active
            probe: {swaps: {}}
            pattern: swapfile
        recover:
          - {name: fix, recover_faults: true}
        """,
         "bad.yaml:8: faults[0].target: found '@node2'; allowed: `@all`, `@control-plane`, `@workers`, "
         "`@<machine>` or a machine name; machines: node1"),
    case("faults-without-expect", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: swap-on
        recover:
          - {name: fix, recover_faults: true}
        """,
         "bad.yaml:1: expect: a scenario with faults needs at least one expectation (what the fault looks like)"),
    case("faults-without-recovery", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: swap-on
        expect:
          - name: swap-active
            probe: {swaps: {}}
            pattern: swapfile
        recover: [{name: restart, reboot: true}]
        """,
         "bad.yaml:12: recover: a scenario with faults needs a recovery: a `run` step or `recover_faults: true` "
         "(or `install.repairs_faults: true`, where the install is to undo them itself)"),
    # -- checks ---------------------------------------------------------------
    case("unknown-probe-kind", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: module-missing
        expect:
          - name: module-absent
            probe: {kmod: {module: br_netfilter}}
            equals: false
        recover:
          - {name: fix, recover_faults: true}
        """,
         f"bad.yaml:10: expect[0].probe.kmod: unknown probe `kmod`; allowed: {PROBE_KINDS}"),
    # a block value is cited at its `key:` line
    case("probe-given-as-list", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe:
              - sysctl: {key: net.ipv4.ip_forward}
            equals: "1"
        """,
         "bad.yaml:8: verify[0].probe: found a list; allowed: one probe as `{kind: {args}}`, kinds: " + PROBE_KINDS),
    case("unknown-probe-arg", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward, timeout: 5}}
            equals: "1"
        """,
         "bad.yaml:8: verify[0].probe.sysctl.timeout: unknown parameter `timeout` of probe `sysctl`; allowed: key"),
    case("check-with-two-matchers", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            pattern: '^1$'
            equals: "1"
        """,
         f"bad.yaml:7: verify[0]: found matchers `pattern`, `equals`; {ONE_MATCHER}"),
    case("check-with-no-matcher", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
        """,
         f"bad.yaml:7: verify[0]: found matchers none; {ONE_MATCHER}"),
    case("observe-with-matcher", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        observe:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
        """,
         "bad.yaml:9: observe[0].equals: `observe` records values and asserts nothing; "
         "remove `equals` or move the check to expect/verify"),
    case("invalid-regex", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            pattern: '(1'
        """,
         "bad.yaml:9: verify[0].pattern: found '(1'; allowed: a valid regular expression "
         "(missing ), unterminated subpattern at position 0)"),
    case("count-without-pattern", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: one-swap
            probe: {swaps: {}}
            count: {min: 1}
        """,
         "bad.yaml:9: verify[0].count: missing required key `pattern`"),
    case("bad-duration", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
            within: 5 seconds
        """,
         "bad.yaml:10: verify[0].within: found '5 seconds'; allowed: a duration like 500ms, 30s, 5m, 1h30m"),
    case("bad-version-range", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
            versions:
              containerd: 1.7+
        """,
         "bad.yaml:11: verify[0].versions.containerd: found '1.7+'; "
         "allowed: comparisons like '>=1.7', '<2.0' or '>=1.7,<2.0'"),
    case("unknown-version-component", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
            versions: {kubelet: '>=1.28'}
        """,
         "bad.yaml:10: verify[0].versions.kubelet: unknown key `kubelet`; allowed: containerd, runc, kernel, systemd, kubernetes"),
    case("duplicate-check-names", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
          - name: forwarding
            probe: {file-content: {path: /proc/sys/net/ipv4/ip_forward}}
            pattern: '^1$'
        """,
         "bad.yaml:10: verify[1].name: duplicate check name `forwarding` in verify"),
    case("check-without-name", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        verify:
          - probe: {sysctl: {key: net.ipv4.ip_forward}}
            equals: "1"
        """,
         "bad.yaml:7: verify[0]: missing required key `name`"),
    # -- recovery steps and evidence ------------------------------------------
    case("step-with-no-action", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        recover:
          - name: wait-a-bit
            timeout: 30s
        """,
         "bad.yaml:7: recover[0]: found actions none; allowed: exactly one of run, reboot, recover_faults, reinstall, "
         "power_cycle"),
    case("step-with-two-actions", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        recover:
          - name: fix-and-reboot
            run: sysctl -w net.ipv4.ip_forward=1
            reboot: true
        """,
         "bad.yaml:7: recover[0]: found actions `run`, `reboot`; allowed: exactly one of run, reboot, recover_faults, reinstall, "
         "power_cycle"),
    case("step-without-name", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        recover:
          - {reboot: true}
        """,
         "bad.yaml:7: recover[0]: missing required key `name`"),
    case("recovery-step-with-bad-name", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: swap-on
        expect:
          - name: swap-active
            probe: {swaps: {}}
            pattern: swapfile
        recover:
          - {name: Fix, recover_faults: true}
        """,
         "bad.yaml:13: recover[0].name: found 'Fix'; allowed: a kebab-case name (lowercase letters, digits, dashes)"),
    case("reboot-false", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        recover:
          - {name: restart, reboot: false}
        """,
         "bad.yaml:7: recover[0].reboot: found False; allowed: true"),
    case("evidence-with-two-kinds", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        evidence:
          - {file: /etc/fstab}
          - {file: /proc/swaps, journal: systemd-sysctl}
        """,
         "bad.yaml:8: evidence[1]: found journal, file; allowed: exactly one of journal, file, command"),
    # -- variables and imports ------------------------------------------------
    case("undefined-variable", """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Breaks {{ vars.module }} on purpose.
        vars:
          modul: br_netfilter
        lab: {suite: bookworm, machines: [{name: node1}]}
        """,
         "bad.yaml:4: summary: undefined variable `module`; defined: `modul`"),
    case("import-of-missing-file", """\
        import:
          - _common/one-node.yaml
        name: bad
        summary: Broken on purpose.
        """,
         "bad.yaml:2: import[0]: found `_common/one-node.yaml`; allowed: a file relative to <tmp> (it does not exist)"),
    case("import-cycle", """\
        name: bad
        summary: Broken on purpose.
        import: [other.yaml]
        """,
         "other.yaml:3: import[0]: `bad.yaml` closes an import cycle: bad.yaml -> other.yaml -> bad.yaml",
         others={"other.yaml": """\
            # imported by bad.yaml, and importing it back
            apiVersion: kubelab/v1
            import: [bad.yaml]
            """}),
]


@pytest.mark.parametrize(("text", "expected", "file", "others"), CASES)
def test_malformed_scenario_reports_exact_problems(tmp_path, text, expected, file, others):
    assert lint(tmp_path, text, file, others) == expected


def test_every_problem_of_a_file_is_reported_at_once_in_order(tmp_path):
    problems = lint(tmp_path, """\
        apiVersion: kubelab/v2
        kind: Scenario
        name: Bad
        summary: Several mistakes.
        install: kubeadm
        colour: red
        lab:
          suite: bookworm
          machines:
            - {name: node1, cpus: 0}
        faults:
          - kind: swap-on
            target: node2
            params: {size_mib: "128"}
        expect:
          - name: swap-active
            probe: {swaps: {}}
            within: soon
        """)
    assert problems == [
        f"bad.yaml:6: colour: unknown key `colour`; allowed: {TOP_KEYS}",
        "bad.yaml:1: apiVersion: found 'kubelab/v2'; allowed: kubelab/v1",
        "bad.yaml:3: name: found 'Bad'; allowed: a kebab-case name (lowercase letters, digits, dashes)",
        "bad.yaml:10: lab.machines[0].cpus: found 0; allowed: an integer at least 1",
        "bad.yaml:5: install: found 'kubeadm'; allowed: none, or a mapping like {track: kubeadm, kubernetes: <version>}",
        "bad.yaml:14: faults[0].params.size_mib: found '128'; allowed: an integer",
        "bad.yaml:13: faults[0].target: found 'node2'; allowed: `@all`, `@control-plane`, `@workers`, "
        "`@<machine>` or a machine name; machines: node1",
        f"bad.yaml:16: expect[0]: found matchers none; {ONE_MATCHER}",
        "bad.yaml:18: expect[0].within: found 'soon'; allowed: a duration like 500ms, 30s, 5m, 1h30m",
        "bad.yaml:1: recover: a scenario with faults needs a recovery: a `run` step or `recover_faults: true` "
         "(or `install.repairs_faults: true`, where the install is to undo them itself)",
    ]


@pytest.mark.parametrize("host_cores", [1, 2, 64])
def test_a_file_is_valid_whatever_this_hosts_cores(tmp_path, monkeypatch, host_cores):
    """More vCPUs than this host has cores is admission's question when a run starts
    (capacity.check_capacity), not the file's: the same file lints the same everywhere."""
    monkeypatch.setattr(os, "cpu_count", lambda: host_cores)
    assert lint(tmp_path, """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: wide
        summary: A machine wider than most hosts.
        lab:
          suite: bookworm
          machines:
            - {name: node1, cpus: 8}
        """, file="wide.yaml") == []


def test_problems_in_an_imported_file_cite_that_file(tmp_path):
    problems = lint(tmp_path, """\
        name: bad
        summary: Imports a broken lab.
        import: [_common/base.yaml]
        verify:
          - name: forwarding
            probe: {sysctl: {key: net.ipv4.ip_forward}}
            pattern: '(1'
        """, others={"_common/base.yaml": """\
            # shared lab with too little memory
            apiVersion: kubelab/v1
            kind: Scenario
            lab:
              suite: bookworm
              machines:
                - {name: node1, memory: 64}
            """})
    assert problems == [
        "_common/base.yaml:7: lab.machines[0].memory: found 64; allowed: an integer at least 256",
        "bad.yaml:7: verify[0].pattern: found '(1'; allowed: a valid regular expression "
        "(missing ), unterminated subpattern at position 0)",
    ]


def test_importing_file_wins_over_imported_values(tmp_path):
    problems = lint(tmp_path, """\
        import: [_common/base.yaml]
        name: bad
        summary: Overrides the suite only.
        lab: {suite: trixie}
        """, others={"_common/base.yaml": """\
            apiVersion: kubelab/v1
            kind: Scenario
            lab:
              suite: buster
              machines: [{name: node1}]
            """})
    assert problems == []
    scenario = load(tmp_path / "bad.yaml")
    assert scenario.lab.suite == "trixie"
    assert [m.name for m in scenario.lab.machines] == ["node1"]


@pytest.mark.parametrize("path", all_files(), ids=lambda p: p.stem)
def test_every_shipped_scenario_lints_clean(path):
    """Each file under scenarios/, found as `invoke scenario.lint` finds it, with lint's own rules
    (claim ids, cited upstream text): no problem, no warning."""
    from harness.evidence import claims

    problems = []
    scenario = load_into(path, problems, claims.defined_ids(claims.all_files()), "claims/*.yaml")
    assert problems == [] and scenario.name == path.stem
    assert scenario.warnings == ()


def test_scenario_lint_checks_every_file_under_scenarios():
    files = all_files()  # scenarios/*.yaml (or $KUBELAB_SCENARIOS)
    assert files
    out = subprocess.run([str(Path(sys.executable).with_name("invoke")), "scenario.lint"], cwd=project_root(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{len(files)} scenario file(s) valid" in out.stdout


def test_a_kubeadm_scenario_that_names_no_release_or_ranges_gets_the_one_default_of_each(tmp_path):
    from harness.artifacts.versions import DEFAULT_KUBERNETES
    from harness.model import DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR
    from harness import tuning
    from harness.provisioners.kubeadm import cluster_spec

    assert lint(tmp_path, """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: plain
        summary: A cluster with every default.
        install: {track: kubeadm}
        lab: {suite: sid, machines: [{name: cp1, role: control-plane}]}
        """, file="plain.yaml") == []
    install = load(tmp_path / "plain.yaml").install
    assert (install.kubernetes, install.pod_cidr, install.service_cidr) == \
        (DEFAULT_KUBERNETES, DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR)
    spec = cluster_spec(install, tuning.decide("kvm"))
    assert (spec.kubernetes, spec.pod_cidr, spec.service_cidr) == \
        (f"v{DEFAULT_KUBERNETES}", DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR)


def test_whole_value_variable_keeps_its_type(tmp_path):
    assert lint(tmp_path, """\
        apiVersion: kubelab/v1
        kind: Scenario
        name: good
        summary: Swap of {{ vars.size }} MiB.
        vars:
          size: 128
        lab: {suite: bookworm, machines: [{name: node1}]}
        faults:
          - kind: swap-on
            params: {size_mib: "{{ vars.size }}"}
        expect:
          - name: swap-active
            probe: {swaps: {}}
            pattern: swapfile
        recover:
          - {name: fix, recover_faults: true}
        """, file="good.yaml") == []
    scenario = load(tmp_path / "good.yaml")
    assert scenario.faults[0].params == {"size_mib": 128}
    assert type(scenario.faults[0].params["size_mib"]) is int
    assert scenario.summary == "Swap of 128 MiB."


# -- files that are not what they claim to be: refused by name, no traceback, no hang -----------
def _problems_of(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load(path)
    return info.value.problems


def test_bytes_that_are_not_utf8_are_refused_with_the_line(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"name: binary\nsummary: \xff\xfe oops\n")
    assert _problems_of(path) == [f"{path}:2: not UTF-8 text (byte 22: b'\\xff'); scenario files are UTF-8 YAML"]


@pytest.mark.parametrize("text", ["name: self\nloop: &a [*a]\n", "name: self\nloop: &a {again: *a}\n"])
def test_an_alias_that_contains_itself_is_refused(tmp_path, text):
    path = tmp_path / "self.yaml"
    path.write_text(text)
    problems = _problems_of(path)
    assert len(problems) == 1 and problems[0].startswith(f"{path}:2: loop")
    assert "an alias refers to a node that contains it" in problems[0]


def _laughs(levels: int, fan: int) -> str:
    lines = ["name: laughs", "l0: &l0 [" + ",".join(["lol"] * fan) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def test_exponential_aliases_are_refused_at_once(tmp_path):
    path = tmp_path / "laughs.yaml"
    path.write_text(_laughs(levels=10, fan=9))  # 9**10 values once expanded
    problems = _problems_of(path)
    assert problems == [f"{path}:3: more than 100 alias uses; write the values out"]


def test_few_aliases_that_expand_hugely_are_refused(tmp_path, monkeypatch):
    from harness.scenario import yamlsrc

    monkeypatch.setattr(yamlsrc, "MAX_ALIASES", 10_000)  # only the expansion bound is left to act
    path = tmp_path / "laughs.yaml"
    path.write_text(_laughs(levels=8, fan=9))
    problems = _problems_of(path)
    assert len(problems) == 1 and "expands to more than 20000 values" in problems[0]


def test_deep_nesting_is_refused(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("name: deep\nx: " + "[" * 100 + "]" * 100 + "\n")
    problems = _problems_of(path)
    assert len(problems) == 1 and "nested more than 64 levels deep" in problems[0]


def test_an_oversized_file_is_refused_unread(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("name: big\n" + "# padding\n" * 40_000)
    problems = _problems_of(path)
    assert problems == [f"{path}:0: {path.stat().st_size} bytes; a scenario file is at most 262144 "
                        "(is this the right file?)"]


def _kubeadm_lab(tmp_path, lab_extra, install_extra=""):
    path = tmp_path / "overlap.yaml"
    path.write_text(textwrap.dedent(f"""\
        apiVersion: kubelab/v1
        kind: Scenario
        name: overlap
        summary: The lab network inside flannel's default pod range.
        lab:
          suite: sid
          network: 10.244.1.0/24
          machines: [{{name: cp1, role: control-plane}}]{lab_extra}
        install: {{track: kubeadm{install_extra}}}
        """))
    return path


def test_a_lab_network_inside_the_pod_range_is_warned_about_with_its_line(tmp_path):
    scenario = load(_kubeadm_lab(tmp_path, ""))
    assert [w.replace(f"{tmp_path}/", "") for w in scenario.warnings] == [
        "overlap.yaml:7: lab.network: 10.244.1.0/24 overlaps install.pod_cidr 10.244.0.0/16: the nodes' addresses "
        "lie in the cluster's pod range; if that is the point, declare it with `lab: {overlap: intended}`"]


def test_an_intended_overlap_and_a_disjoint_range_are_not_warned_about(tmp_path):
    assert load(_kubeadm_lab(tmp_path, "\n          overlap: intended")).warnings == ()
    assert load(_kubeadm_lab(tmp_path, "", ", pod_cidr: 172.20.0.0/16, service_cidr: 172.21.0.0/16")).warnings == ()


def test_a_rebuild_that_still_overlaps_is_warned_about_even_when_the_overlap_is_intended(tmp_path):
    path = _kubeadm_lab(tmp_path, "\n          overlap: intended")
    path.write_text(path.read_text() + "recover:\n  - {name: again, reinstall: {pod_cidr: 10.244.0.0/16, "
                                       "service_cidr: 172.21.0.0/16}}\n")
    assert [w.replace(f"{tmp_path}/", "") for w in load(path).warnings] == [
        "overlap.yaml:12: lab.network: 10.244.1.0/24 overlaps recover[0].reinstall.pod_cidr 10.244.0.0/16: the "
        "nodes' addresses lie in the cluster's pod range; choose a range outside it"]


def test_a_lab_network_that_is_the_fault_has_no_control_run(tmp_path):
    from harness.scenario.files import find

    assert "its control is kubeadm-baseline" in load(find("cidr-overlap-10-244")).control_problem()
    assert load(find("flannel-no-brnetfilter")).control_problem() == ""


def test_lint_prints_the_warning_and_still_passes(tmp_path):
    import subprocess
    import sys

    path = _kubeadm_lab(tmp_path, "")
    proc = subprocess.run([sys.executable, "-m", "invoke", "scenario.lint", "--files", str(path)],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    assert "warning: " in proc.stderr and "overlaps install.pod_cidr" in proc.stderr
    assert "1 scenario file(s) valid, 1 warning(s); 1 claims file(s) valid" in proc.stdout


UPSTREAM_TEXT_SCENARIO = """\
    apiVersion: kubelab/v1
    kind: Scenario
    name: cited
    summary: s
    lab: {suite: bookworm, machines: [{name: node1}]}
    expect:
      - name: flanneld-says-so
        probe: {journal: {unit: containerd}}
        pattern: 'failed to load plugin'
      - name: swap-in-fstab
        probe: {file-content: {path: /etc/fstab}}
        absent: 'swap'
        source: 'fstab(5): the third field is the type'
      - name: swap-active
        probe: {swaps: {}}
        pattern: 'swapfile'
"""


def test_lint_asks_a_pattern_on_upstream_text_to_cite_its_source(tmp_path):
    """journal, command, file-content, pod-logs, events and ansible-failure read text a component or
    command wrote; swaps (and every other probe) give a value kubelab formats, which needs no citation."""
    from harness.scenario.lint_files import lint as lint_files

    path = tmp_path / "cited.yaml"
    path.write_text(textwrap.dedent(UPSTREAM_TEXT_SCENARIO))
    with pytest.raises(ScenarioError) as err:
        lint_files([path], [])
    assert [_relative(p, tmp_path) for p in err.value.problems] == [
        "cited.yaml:9: expect[0].pattern: `pattern` matches the text probe `journal` reads (a component's log, "
        "output or file), and the check names no `source:`; cite the upstream file and version that text comes "
        "from (or, for text kubelab's own command prints, `source: \"kubelab: ...\"` saying which)"]
    assert load(path).name == "cited"  # a run loads it: the citation is lint's rule


def test_exactly_the_probes_that_read_upstream_text_are_marked_so():
    assert sorted(k for k, p in PROBES.items() if p.UPSTREAM_TEXT) == [
        "ansible-failure", "command", "events", "file-content", "journal", "pod-logs"]
