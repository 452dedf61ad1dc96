"""kubelab's command line: `invoke --list` shows every task.

Tasks parse flags and call the harness; a HarnessError becomes a clean exit
with its message. Exit codes: 0 done; 1 only for a scenario whose
expectations were not met; 2 bad input (the message says what to change) or
the harness or host broke; 128+N stopped by signal N (130 for Ctrl-C).
"""

from __future__ import annotations

import functools
import json
import shlex
import sys
import time

from invoke import Collection, Exit, task

from harness import host, lifecycle, signals
from harness.errors import HarnessError, UsageError
from harness.images import build as image_build
from harness.images import store
from harness.images.recipe import DEFAULT_SUITE, SUITES, Recipe, check_suite
from harness.lab import Lab
from harness.progress import Progress


def harness_errors(fn):
    """Turn HarnessError into a one-message exit; never a traceback for known failures.
    SIGINT, SIGTERM and SIGHUP all stop a task the way Ctrl-C does (harness/signals.py)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        signals.install()
        try:
            return fn(*args, **kwargs)
        except HarnessError as exc:  # UsageError included: exit 1 is reserved for "expectation not met"
            raise Exit(f"kubelab: {exc}", code=exc.exit_code) from None
        except KeyboardInterrupt as exc:
            raise Exit(f"kubelab: interrupted ({exc or 'SIGINT'})", code=signals.exit_code(exc)) from None

    return wrapper


# -- host --------------------------------------------------------------------
@task(help={"fix": "start virtlogd/libvirtd and fix /dev/kvm access where possible"})
@harness_errors
def doctor(c, fix=False):
    """Check that this host can run labs; print the exact fix for each problem."""
    if fix:
        host.prepare()
    bad = 0
    for check in host.checks():
        mark = "ok  " if check.ok else "FAIL"
        print(f"{mark} {check.name:<20} {check.detail}")
        if not check.ok:
            bad += 1
            print(f"     fix: {check.fix}")
    if bad:
        raise Exit(f"kubelab: {bad} problem(s); `invoke doctor --fix` fixes the daemons and /dev/kvm", code=2)


# -- images ------------------------------------------------------------------
@task(help={"suite": f"Debian suite: {', '.join(SUITES)}", "rebuild": "build even if cached",
            "kubernetes": "make a node image: the suite image plus this Kubernetes kit (built if missing)",
            "preload": "with --kubernetes: pull every kit image into the node image, so no pull is needed",
            "containerd": "sid with this containerd built from source (2.2-2.4; built if missing) over Debian's"})
@harness_errors
def images_build(c, suite=DEFAULT_SUITE, rebuild=False, kubernetes=None, preload=False, containerd=None):
    """Build (or reuse) a guest image of a Debian suite, or with --kubernetes a node image on it."""
    check_suite(suite)
    if preload and not kubernetes:
        raise UsageError("--preload needs --kubernetes VERSION (it preloads that kit's images)")
    tag = None
    if containerd:
        from harness.artifacts import containerd as built
        from harness.images.containerd_image import SUITE

        if suite != SUITE:
            raise UsageError(f"--containerd {containerd}: a containerd built from source goes into --suite {SUITE}")
        tag = built.check_version(containerd)
        built.build_containerd(tag, Progress())
    host.prepare()
    if kubernetes:
        from harness.artifacts import kit
        from harness.images import node

        version = kit.check_version(kubernetes)
        kit.build_kit(version, Progress())
        image = node.ensure(suite, version.tag, Progress(), preload=preload, rebuild=rebuild, containerd=tag)
    elif tag:
        from harness.images import containerd_image

        image = containerd_image.ensure(suite, tag, Progress(), rebuild=rebuild)
    else:
        image = image_build.ensure(Recipe.debian(suite), Progress(), rebuild=rebuild)
    print(f"{image.id}  {image.directory}")


@task(help={"json_": "print the manifests as JSON"})
@harness_errors
def images_list(c, json_=False):
    """List built images with the versions their manifests record."""
    images = store.all_images()
    current = {s: Recipe.debian(s).image_id for s in SUITES}
    if json_:
        print(json.dumps([i.manifest for i in images], indent=2))
        return
    if not images:
        print("no images yet: `invoke images.build --suite bookworm`")
        return
    for image in images:
        v = image.versions
        kube = image.manifest.get("kubernetes")
        if kube:
            print(f"{image.id}  (node image on {image.manifest['base_image']})\n  kubeadm {kube['kubeadm']}, "
                  f"kubelet {kube['kubelet']}, kubectl {kube['kubectl']}, {kube['crictl']}, "
                  f"CNI plugins {kube['cni_plugins']}; preloaded {len(image.manifest['preloaded'])} image(s)\n"
                  f"  built {image.manifest['built_at']} in {image.manifest['build_seconds']}s  {image.directory}")
            continue
        built = image.manifest.get("containerd_build")
        if built:
            from harness.images.containerd_image import is_current

            stale = "" if is_current(image) else "  (stale: suite image or containerd build changed)"
            print(f"{image.id}{stale}  (on {image.manifest['base_image']})\n  containerd {built['version']} built "
                  f"from {built['module']} over Debian's {built['debian_package']}, runc {v['runc']}\n"
                  f"  made {image.manifest['built_at']} in {image.manifest['build_seconds']}s  {image.directory}")
            continue
        stale = "" if current.get(image.suite) == image.id else "  (stale: recipe changed)"
        print(f"{image.id}{stale}\n  {v['os']} ({v['debian_version']}), kernel {v['kernel']}, "
              f"containerd {v['containerd']}, runc {v['runc']}, systemd {v['systemd']}\n"
              f"  built {image.manifest['built_at']} in {image.manifest['build_seconds']}s  {image.directory}")


@task(help={"suite": f"Debian suite: {', '.join(SUITES)}"})
@harness_errors
def images_box(c, suite=DEFAULT_SUITE):
    """Package the suite's image as a vagrant-libvirt box and add it to Vagrant (no-op if there)."""
    from harness.images import box
    from harness.machines.vagrant_cli import VagrantCli

    host.prepare()
    VagrantCli.check()
    image = image_build.ensure(Recipe.debian(suite), Progress())
    name = box.ensure(image, VagrantCli(box.vagrant_home()), Progress())
    print(f"{name}  (VAGRANT_HOME={box.vagrant_home()})")


@task
@harness_errors
def images_prune(c):
    """Remove images whose recipe changed since they were built, and their Vagrant boxes and box volumes."""
    from harness.images import containerd_image, node

    current = {Recipe.debian(s).image_id for s in SUITES}
    for image in store.all_images():
        if image.manifest.get("kubernetes"):
            keep = node.is_current(image)
        else:
            keep = image.id in current or containerd_image.is_current(image)
        if not keep:
            image_build.remove(image)
            print(f"removed {image.id}")
    from harness.images import box
    from harness.machines.vagrant_cli import VagrantCli

    if not box.vagrant_home().exists():
        return
    from harness.machines.libvirt import LibvirtBackend

    pool = LibvirtBackend().storage_pool(create=False)
    in_use = {Lab.load(n).state.get("box") for n in Lab.names()}
    keep = {f"{box.BOX_PREFIX}{i}" for i in current} | {b for b in in_use if b}
    for item in box.prune(VagrantCli(box.vagrant_home()), pool, keep):
        print(f"removed {item}")


# -- artifacts ------------------------------------------------------------------
@task(help={"kubernetes": "Kubernetes release to build (default: harness.artifacts.versions.DEFAULT_KUBERNETES)",
            "rebuild": "build every component again even if stored",
            "containerd": "instead, build this containerd release (2.2-2.4) from its Go module"})
@harness_errors
def artifacts_build(c, kubernetes=None, rebuild=False, containerd=None):
    """Build Kubernetes, etcd, CoreDNS, flannel, CNI plugins, crictl and pause from source, then their images."""
    from harness.artifacts import kit
    from harness.artifacts.versions import DEFAULT_KUBERNETES

    if containerd:
        from harness.artifacts import containerd as built

        if kubernetes:
            raise UsageError("--containerd builds containerd alone: leave out --kubernetes, or run twice")
        record = built.build_containerd(built.check_version(containerd), Progress(), rebuild=rebuild)
        print(f"containerd {record['containerd']}: {', '.join(sorted(record['files']))} in {record['seconds']}s")
        return
    version = kit.check_version(kubernetes or DEFAULT_KUBERNETES)
    record = kit.build_kit(version, Progress(), rebuild=rebuild)
    print(f"kit {record['kubernetes']}: {len(record['components'])} components in {record['seconds']}s")


@task(help={"json_": "print the store entries as JSON"})
@harness_errors
def artifacts_list(c, json_=False):
    """Show what is built: kits, and every store entry with its module, sha256, size and build time."""
    from harness.artifacts import listing

    print(listing.render(json_=json_))


# -- labs --------------------------------------------------------------------
@task(help={
    "machines": "number of machines (1-16)",
    "suite": f"Debian suite of the guests: {', '.join(SUITES)}",
    "cpus": "vCPUs per machine",
    "memory": "MiB of memory per machine",
    "name": "lab name (default: lab-XXXX)",
    "backend": "machine backend",
    "kubernetes": "boot the node image of this Kubernetes kit and serve its registry and files to the lab",
    "containerd": "sid with this containerd built from source (2.2-2.4; `invoke artifacts.build --containerd V`)",
})
@harness_errors
def lab_up(c, machines=1, suite=DEFAULT_SUITE, cpus=1, memory=1024, name=None, backend="libvirt", kubernetes=None,
           containerd=None):
    """Create a lab: an isolated network and N machines, up when SSH answers."""
    spec = lifecycle.plan_lab(int(machines), suite, int(cpus), int(memory), name, backend, kubernetes=kubernetes,
                              containerd=containerd)
    lab = lifecycle.up(spec, Progress())
    print(lab.name)


@task(help={"command": "run this command instead of a shell", "lab": "lab name (default: the only lab)"})
@harness_errors
def lab_ssh(c, name, command=None, lab=None):
    """SSH into machine NAME (pinned host key), or run one command there."""
    the_lab = _one_lab(lab)
    target = the_lab.ssh_target(name)
    if command is not None:
        from harness.remote.ssh import SshRemote

        with SshRemote(target) as remote:
            result = remote.run(command, timeout=600)
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.exit_code:
            raise Exit(code=result.exit_code)
        return
    known_hosts = the_lab.directory / "keys" / "known_hosts"
    known_hosts.write_text(f"{target.known_hosts_name} {target.host_key}\n")
    argv = ["ssh", "-i", str(target.key_path), "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "IdentitiesOnly=yes", f"{target.user}@{target.host}"]
    c.run(" ".join(shlex.quote(a) for a in argv), pty=True, warn=True)


def _one_lab(name):
    if name:
        return Lab.load(name)
    names = Lab.names()
    if len(names) == 1:
        return Lab.load(names[0])
    raise UsageError("give --lab NAME: " + (f"labs are {', '.join(names)}" if names else "there is no lab; `invoke lab.up`"))


@task
@harness_errors
def lab_status(c):
    """Show every lab, its machines, their state and addresses."""
    names = Lab.names()
    if not names:
        print("no labs")
    for name in names:
        lab = Lab.load(name)
        backend = lifecycle.backend_for(lab.state["backend"])
        net = lab.state.get("network") or {}
        print(f"{name}: {lab.status}, {lab.state['suite']} ({lab.state['image']['id']}), "
              f"network {net.get('name', '-')} {net.get('subnet', '')}, created {lab.state['created_at']}")
        for m in backend.machines(lab):
            print(f"  {m.name:<10} {m.role:<8} {m.state:<10} {m.ip}")
        for svc in (lab.state.get("services") or {}).values():
            print(f"  server {svc['name']}: {svc['url']} (pid {svc['pid']}, log {svc['log']})")
    from harness.machines.libvirt import lab_of

    leftovers = [o for o in lifecycle.backend_for("libvirt").leftovers() if lab_of(o.split(" ", 1)[1]) not in names]
    if leftovers:
        print("kubelab objects no lab claims (`invoke lab.down --all` removes them):")
        for item in leftovers:
            print(f"  {item}")


@task(help={"name": "the lab to destroy", "all_": "remove every lab and every kubelab object no lab claims"})
@harness_errors
def lab_down(c, name="", all_=False):
    """Destroy a lab (machines, disks, network, state folder), or --all of them."""
    if all_:
        lifecycle.down_all(Progress())
    elif name:
        lifecycle.down(name, Progress())
    else:
        raise UsageError("give --name LAB or --all" + (f" (labs: {', '.join(Lab.names())})" if Lab.names() else ""))


# -- the main job -------------------------------------------------------------
@task(help={"suite": f"Debian suite: {', '.join(SUITES)}", "keep": "leave the lab running"})
@harness_errors
def demo(c, suite=DEFAULT_SUITE, keep=False):
    """Build the image, bring up 2 machines, show what each one is, tear down."""
    spec = lifecycle.plan_lab(2, suite, 1, 1024, f"demo-{int(time.time()) % 100000}")
    lab = lifecycle.up(spec, Progress())
    from harness.remote.ssh import SshRemote

    try:
        for m in lab.state["machines"]:
            with SshRemote(lab.ssh_target(m["name"])) as remote:
                r = remote.run("echo \"$(hostname) $(hostname -I) machine-id $(cat /etc/machine-id)\"; "
                               "uname -r; containerd --version; ip route", timeout=60, check=True)
            print(r.stdout.rstrip())
    finally:
        if not keep:
            lifecycle.down(lab.name, Progress())


# -- scenarios -------------------------------------------------------------------
@task(default=True, help={
    "name": "scenario name (scenarios/NAME.yaml) or path",
    "suite": "run on this Debian suite instead of the scenario's",
    "keep": "leave the lab up after the run",
    "control": "negative control: the same scenario without its faults must pass its healthy checks",
    "dry_run": "print every command that would run on every machine, create nothing",
    "kubernetes": "install this Kubernetes release instead of the scenario's (kubeadm scenarios)",
    "lab": "run on this pooled lab (made by `invoke matrix`): restore its snapshot first, leave it up after",
    "containerd": "run on sid with this containerd built from source (2.2-2.4) over Debian's",
})
@harness_errors
def scenario_run(c, name, suite=None, keep=False, control=False, dry_run=False, kubernetes=None, lab=None,
                 containerd=None):
    """Run a scenario: inject, observe the failure, recover, verify, report. Exit 0/1/2."""
    from harness.scenario.load import find, load

    scenario = load(find(name))
    if containerd:
        from harness.artifacts.containerd import parse
        from harness.images.containerd_image import SUITE

        if suite and suite != SUITE:
            raise UsageError(f"--containerd {containerd}: a containerd built from source runs on {SUITE}, "
                             f"not --suite {suite}")
        scenario = scenario.with_containerd(parse(containerd).lstrip("v"))
        suite = SUITE
    if kubernetes:
        from harness.artifacts.versions import KubeVersion

        if scenario.install.track == "none":
            raise UsageError(f"--kubernetes: scenario {scenario.name} is host-only (install track none)")
        scenario = scenario.with_kubernetes(str(KubeVersion.parse(kubernetes)))
    for w in scenario.warnings:  # before anything is created
        print(f"warning: {w}", file=sys.stderr)
    if control and scenario.control_problem():
        raise UsageError(f"--control: {scenario.control_problem()}")
    if suite:
        from harness.images.recipe import check_suite

        check_suite(suite)
    if dry_run:
        from harness.scenario.dryrun import plan_lines

        print("\n".join(plan_lines(scenario, suite or scenario.lab.suite, control)))
        return
    from harness.scenario.engine import Engine, Options
    from harness.scenario.labs import BackendLabs, PooledLabs

    host.prepare()
    labs = PooledLabs(lab) if lab else BackendLabs()
    result = Engine(scenario, Options(suite=suite, keep=keep, control=control), labs, Progress()).run()
    print(result.directory)
    if result.exit_code:
        raise Exit(f"kubelab: {result.result}: {result.reason}", code=result.exit_code)


@task(help={"files": "scenario files (default: every scenarios/*.yaml)"}, iterable=["files"])
@harness_errors
def scenario_lint(c, files=None):
    """Validate scenario files; report every problem with file, line and field."""
    from pathlib import Path

    from harness.errors import ScenarioError
    from harness.scenario.load import all_files, load_into

    paths = [Path(f) for f in files] if files else all_files()
    problems: list[str] = []
    warnings: list[str] = []
    for path in paths:
        scenario = load_into(path, problems)
        warnings += list(scenario.warnings) if scenario else []
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    if problems:
        raise ScenarioError(problems)
    print(f"{len(paths)} scenario file(s) valid" + (f", {len(warnings)} warning(s)" if warnings else ""))


@task(help={"run_dir": "a run folder (runs/<scenario>/<timestamp>)"})
@harness_errors
def report(c, run_dir):
    """Render report.md, report.html and junit.xml again from a run's run.json."""
    from pathlib import Path

    from harness.evidence.render import write_reports

    path = Path(run_dir) / "run.json"
    try:
        run = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read a run record ({exc})") from None
    for written in write_reports(Path(run_dir), run):
        print(written)


ns = Collection(doctor, demo, report)
ns.add_collection(Collection("scenario", run=scenario_run, lint=scenario_lint))
ns.add_collection(Collection("images", build=images_build, list=images_list, prune=images_prune, box=images_box))
@task
@harness_errors
def artifacts_prune(c):
    """Remove store entries and registry storages that no kit refers to any more."""
    from harness.artifacts import listing

    removed = listing.prune()
    print("\n".join(f"removed {r}" for r in removed) or "nothing to remove")


ns.add_collection(Collection("artifacts", build=artifacts_build, list=artifacts_list, prune=artifacts_prune))
ns.add_collection(Collection("lab", up=lab_up, ssh=lab_ssh, status=lab_status, down=lab_down))


# -- matrix ----------------------------------------------------------------------------
def _matrix_cells(scenario, kubernetes, suite, containerd=None):
    from harness.artifacts.containerd import parse
    from harness.artifacts.versions import DEFAULT_KUBERNETES
    from harness.matrix.cells import HOST, image_containerd, make_cells, parse_list
    from harness.scenario.load import find, load

    scenarios = {}
    for name in parse_list(scenario, "scenario"):
        s = load(find(name))
        for w in s.warnings:
            print(f"warning: {w}", file=sys.stderr)
        scenarios[s.name] = s
    # "host" is the row of host-only scenarios (an exported host cell passes it back)
    versions = tuple(v for v in parse_list(kubernetes or DEFAULT_KUBERNETES, "kubernetes") if v != HOST) \
        or (DEFAULT_KUBERNETES,)
    built = tuple(parse(v).lstrip("v") for v in parse_list(containerd, "containerd")) if containerd else ()
    suites = parse_list(suite, "suite") if suite or not built else ()  # --suite "" with --containerd: built only
    axes = {"kubernetes": list(versions), "suites": list(suites), "containerd_built": list(built),
            "scenarios": list(scenarios)}
    return make_cells(scenarios, versions, suites, series=image_containerd, built=built), scenarios, axes


def _build_containerd(cells, scenarios) -> None:
    """Each containerd of the matrix built from source, its sid layer and the node images on
    it, before any cell starts (cells running side by side would otherwise each make them)."""
    from harness.artifacts import containerd as built
    from harness.artifacts import kit
    from harness.images import containerd_image, node
    from harness.matrix.cells import HOST

    for version in dict.fromkeys(cl.built for cl in cells if cl.built):
        built.build_containerd(built.check_version(version), Progress())
        containerd_image.ensure(containerd_image.SUITE, version, Progress())
    for cl in cells:
        if cl.built and cl.kubernetes != HOST and cl.supported:
            tag = kit.check_version(cl.kubernetes)
            kit.build_kit(tag, Progress())
            preload = any(scenarios[n].install.preload for n in cl.scenarios)
            node.ensure(containerd_image.SUITE, tag.tag, Progress(), preload=preload, containerd=cl.built)


@task(default=True, help={
    "scenario": "scenario names, comma-separated",
    "kubernetes": "Kubernetes releases, comma-separated (default: the kit's default)",
    "suite": "Debian suites for the containerd axis, comma-separated: bookworm (1.6), trixie (1.7), sid (2.x)",
    "containerd": "containerd releases built from source into sid (2.2-2.4), comma-separated: more columns",
    "out": "the matrix folder (default runs/matrix/<UTC stamp>); --resume reuses one",
    "deadline": "minutes; then what runs is stopped and torn down, and the rest is NOT RUN",
    "max_vcpus": "cap on the guests' vCPUs running at once (default: 2 x host cores)",
    "resume": "keep the cells of --out that already hold a complete run",
    "unsupported": "also run pairs upstream does not support",
    "compare": "a previous matrix.json: mark every cell that changed as `was -> now`",
    "dry_run": "print the plan, run nothing",
    "no_fanout": "boot a fresh lab for every scenario instead of restoring a cell's pooled lab",
})
@harness_errors
def matrix_run(c, scenario, kubernetes=None, suite="sid", out=None, deadline=None, max_vcpus=None, resume=False,
               unsupported=False, compare=None, dry_run=False, no_fanout=False, containerd=None):
    """Run scenarios across Kubernetes and containerd versions; pivot their facts into matrix.md/html."""
    import os
    from pathlib import Path

    from harness import paths
    from harness.matrix import report, run, schedule

    cells, scenarios, axes = _matrix_cells(scenario, kubernetes, suite, containerd)
    if resume and not out:
        raise UsageError("--resume needs --out MATRIX_FOLDER (the matrix to resume)")
    previous = report.load(Path(compare)) if compare else None
    folder = Path(out) if out else paths.project_root() / "runs" / "matrix" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    opts = run.Options(out=folder, deadline_min=float(deadline) if deadline else None,
                       max_vcpus=int(max_vcpus) if max_vcpus else 2 * (os.cpu_count() or 1),
                       memory_budget_mib=schedule.budget(host.meminfo()["MemTotal"] >> 20),
                       resume=resume, run_unsupported=unsupported, fanout=not no_fanout)
    print("\n".join(run.plan_lines(cells, scenarios, opts)))
    if dry_run:
        return
    host.prepare()
    signals.install()
    _build_containerd(cells, scenarios)
    matrix = run.run(cells, scenarios, opts, axes, Progress())
    if previous:
        report.save(report.compare(matrix, previous, compare), folder)
    print(folder / "matrix.md")
    statuses = [s["status"] for cell in matrix["cells"] for s in cell["scenarios"].values()]
    if report.INFRA in statuses:
        raise Exit("kubelab: matrix: some cells are INFRA", code=2)
    if report.FAIL in statuses:
        raise Exit("kubelab: matrix: some cells FAIL", code=1)


@task(help={"format_": "github or gitlab", "scenario": "as for matrix", "kubernetes": "as for matrix",
            "suite": "as for matrix", "deadline": "the harness deadline per cell job, minutes (the job timeout adds a margin)",
            "output": "write here instead of printing", "unsupported": "also export unsupported pairs",
            "containerd": "as for matrix"})
@harness_errors
def matrix_export(c, format_, scenario, kubernetes=None, suite="sid", deadline=150, output=None, unsupported=False,
                  containerd=None):
    """One CI job per matrix cell, for self-hosted libvirt runners, plus a merge job."""
    from pathlib import Path

    from harness.matrix import export

    cells, _, _ = _matrix_cells(scenario, kubernetes, suite, containerd)
    text = export.export(format_, [cl for cl in cells if cl.supported or unsupported], int(deadline))
    if output:
        Path(output).write_text(text)
        print(output)
    else:
        print(text, end="")


@task(help={"out": "folder for the merged matrix", "parts": "glob of the jobs' matrix.json files"})
@harness_errors
def matrix_merge(c, out, parts):
    """Combine the matrix.json of several jobs into one report."""
    import glob
    from pathlib import Path

    from harness.matrix import report

    files = sorted(glob.glob(parts))
    if not files:
        raise UsageError(f"--parts {parts!r}: no file matches")
    print(report.save(report.merge([report.load(Path(f)) for f in files]), Path(out)))


ns.add_collection(Collection("matrix", run=matrix_run, export=matrix_export, merge=matrix_merge))


# -- verify ----------------------------------------------------------------------
@task(help={
    "lab": "a kubelab lab with a cluster on it (kept by `invoke scenario NAME --keep`, or lab.up + an install)",
    "kubeconfig": "a cluster kubelab did not make: its kubeconfig (with --ssh, --identity, --known-hosts)",
    "ssh": "its nodes, USER@HOST[:PORT],... (every node a shell is wanted on; matched to nodes by InternalIP)",
    "identity": "the private key the nodes accept (default ~/.ssh/id_ed25519)",
    "known_hosts": "the nodes' host keys: required with --ssh (nothing is trusted on first use)",
    "layers": "all, or some of: nodes,etcd,certificates,dns,records,kube-system,workload",
    "image": "the image verify's pods run (busybox-like: sh, nslookup, wget, httpd; default kubelab's toolbox)",
    "dry_run": "print what each layer would read, reach nothing",
})
@harness_errors
def verify(c, lab=None, kubeconfig=None, ssh=None, identity=None, known_hosts=None, layers="all", image=None,
           dry_run=False):
    """Check a running cluster layer by layer, whatever installed it. Exit 0/1/2."""
    import os
    from pathlib import Path

    from harness import verify as layers_of
    from harness.verify.access import TOOLBOX
    from harness.verify.session import lab_connector, ssh_connector, verify as run_verify

    try:
        chosen = layers_of.chosen(layers)
    except ValueError as exc:
        raise UsageError(f"--layers: {exc}") from None
    if bool(lab) == bool(kubeconfig):
        raise UsageError("give either --lab LAB or --kubeconfig FILE --ssh USER@HOST,... --known-hosts FILE")
    if lab and (ssh or identity or known_hosts):
        raise UsageError("--ssh, --identity and --known-hosts go with --kubeconfig; a lab brings its own keys")
    if kubeconfig and not ssh:
        raise UsageError("--kubeconfig needs --ssh USER@HOST,...: the layers read files on the nodes too")
    if kubeconfig and not Path(kubeconfig).is_file():
        raise UsageError(f"--kubeconfig {kubeconfig}: no such file")
    if dry_run:
        for name in chosen:
            print(f"[verify] {name}: {layers_of.layer(name).READS}")
        return
    if lab:
        connect = lab_connector(lab, image or TOOLBOX)
    else:
        connect = ssh_connector(Path(kubeconfig), ssh, Path(identity or os.path.expanduser("~/.ssh/id_ed25519")),
                                Path(known_hosts) if known_hosts else None, image or TOOLBOX)
    result = run_verify(connect, chosen, progress=Progress())
    print(result.directory)
    if result.exit_code:
        raise Exit(f"kubelab: {result.result}: {result.reason}", code=result.exit_code)


ns.add_task(verify)
