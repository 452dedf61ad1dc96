"""kubelab's command line: `invoke --list` shows every task.

The edge only: each task's options are checked (harness/cli_options.py) before
any work starts, the harness does the work, the task prints. Exit codes: 0
met; 1 only for a scenario or matrix whose expectations were not met; 2 bad
input (the message names the option, what is wrong and what is allowed), the
harness or host broke, a bug in kubelab, or interrupted; 128+N stopped by
signal N (130 for Ctrl-C).
"""

from __future__ import annotations

import functools
import sys
import traceback

from invoke import Collection, Exit, task

from harness import host, lifecycle, signals
from harness.cli_options import (Choice, CommaList, ExistingFile, Flag, Glob, Integer, Positive, Several, Text,
                                 WritableFile, WritableFolder, checked, writable_folder_problem)
from harness.cli_values import (BOOK_FOLDER, CLAIMS_FILE, CONTAINERD, GIT_SOURCES, KUBERNETES, KUBESPRAY, LAB, MACHINE,
                                MATRIX_RECORD, NEW_LAB, RECIPE, RUN_FOLDER, SCENARIO, SSH_TARGETS, SUITE, VERIFY_LAYERS)
from harness.errors import HarnessError, UsageError
from harness.images.recipe import DEFAULT_SUITE, SUITES
from harness.lab import Lab
from harness.progress import Progress


def harness_errors(fn):
    """Every way a task can end, as kubelab's exit codes, never a bare traceback for a known
    failure. SIGINT, SIGTERM and SIGHUP all stop a task the way Ctrl-C does (harness/signals.py)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        signals.install()
        try:
            return fn(*args, **kwargs)
        except Exit:
            raise
        except HarnessError as exc:  # UsageError included: exit 1 is reserved for "expectation not met"
            raise Exit(f"kubelab: {exc}", code=2) from None
        except OSError as exc:  # the host: a folder that cannot be written, a disk that is full
            raise Exit(f"kubelab: {exc}", code=2) from None
        except KeyboardInterrupt as exc:
            raise Exit(f"kubelab: interrupted ({exc or 'SIGINT'})", code=signals.exit_code(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a bug in kubelab: its traceback, and exit 2, not "not met"
            traceback.print_exc()
            raise Exit(f"kubelab: internal error (a bug in kubelab): {type(exc).__name__}: {exc}", code=2) from None

    return wrapper


def parse_errors_exit_2() -> None:
    """invoke ends its own parse errors (an unknown option or task, a missing argument, a value
    given to a flag) with exit 1, which here means "not met". It loads this file before it
    parses the tasks' arguments (invoke/program.py, Program.run: parse_collection, then
    parse_tasks), so the running program's parse_tasks is wrapped to make them exit 2."""
    from invoke.exceptions import ParseError
    from invoke.main import program

    parse_tasks = program.parse_tasks
    if getattr(parse_tasks, "exits_2", False):
        return

    def parse_tasks_exit_2():
        try:
            parse_tasks()
        except ParseError as exc:
            raise Exit(f"kubelab: {exc}", code=2) from None

    parse_tasks_exit_2.exits_2 = True
    program.parse_tasks = parse_tasks_exit_2


parse_errors_exit_2()


# -- host --------------------------------------------------------------------
@task(help={"fix": "start virtlogd/libvirtd and fix /dev/kvm access where possible"})
@harness_errors
@checked(fix=Flag())
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
            "containerd": "sid with this containerd built from source (2.2-2.4; built if missing) over Debian's",
            "recipe": "the guest image's recipe: debian, or kubespray (debian plus what kubespray's Ansible wants)"})
@harness_errors
@checked(suite=SUITE, rebuild=Flag(), kubernetes=KUBERNETES, preload=Flag(), containerd=CONTAINERD, recipe=RECIPE)
def images_build(c, suite=DEFAULT_SUITE, rebuild=False, kubernetes=None, preload=False, containerd=None,
                 recipe="debian"):
    """Build (or reuse) a guest image of a Debian suite, or with --kubernetes a node image on it."""
    from harness.images import wanted

    image = wanted.ensure(suite, kubernetes, containerd, preload=preload, rebuild=rebuild, progress=Progress(),
                          recipe=recipe)
    print(f"{image.id}  {image.directory}")


@task(help={"json_": "print the manifests as JSON"})
@harness_errors
@checked(json_=Flag())
def images_list(c, json_=False):
    """List built images with the versions their manifests record."""
    from harness.images import listing

    print(listing.render(json_=json_))


@task(help={"suite": f"Debian suite: {', '.join(SUITES)}"})
@harness_errors
@checked(suite=SUITE)
def images_box(c, suite=DEFAULT_SUITE):
    """Package the suite's image as a vagrant-libvirt box and add it to Vagrant (no-op if there)."""
    from harness.images import box
    from harness.images import build as image_build
    from harness.images.recipe import Recipe
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
    from harness.images import prune

    for item in prune.prune():
        print(f"removed {item}")


# -- artifacts ------------------------------------------------------------------
def point_sources(given) -> None:
    if given:
        from harness.artifacts import git_source

        git_source.point(given)


@task(help={"kubernetes": "Kubernetes release to build (default: harness.artifacts.versions.DEFAULT_KUBERNETES)",
            "rebuild": "build every component again even if stored",
            "containerd": "instead, build this containerd release (2.2-2.4) from its Go module",
            "kubespray": "also build what this kubespray checkout downloads beyond the kit (etcd, runc, containerd "
                         "at its versions), and say what of its list the lab cannot serve",
            "source": "NAME=PATH,...: local clones of what is built from a git tag (calico, node-cache, "
                      "cluster-proportional-autoscaler, nerdctl); else KUBELAB_SRC_* (docs/kit.md)"})
@harness_errors
@checked(kubernetes=KUBERNETES, rebuild=Flag(), containerd=CONTAINERD, kubespray=KUBESPRAY, source=GIT_SOURCES)
def artifacts_build(c, kubernetes=None, rebuild=False, containerd=None, kubespray=None, source=None):
    """Build Kubernetes, etcd, CoreDNS, flannel, CNI plugins, crictl and pause from source, then their images."""
    from harness.artifacts import kit
    from harness.artifacts.versions import DEFAULT_KUBERNETES

    if containerd:
        from harness.artifacts import containerd as built

        if kubernetes or kubespray:
            raise UsageError("--containerd builds containerd alone: leave out --kubernetes and --kubespray, or run twice")
        record = built.build_containerd(built.check_version(containerd), Progress(), rebuild=rebuild)
        print(f"containerd {record['containerd']}: {', '.join(sorted(record['files']))} in {record['seconds']}s")
        return
    version = kit.check_version(kubernetes or DEFAULT_KUBERNETES)
    point_sources(source)
    if kubespray:  # the checkout and the release in its tables, before an hour of building
        from harness.tracks.kubespray import build_for_checkout, checkout_for_build

        found, defaults = checkout_for_build(kubespray, str(version))
    record = kit.build_kit(version, Progress(), rebuild=rebuild)
    print(f"kit {record['kubernetes']}: {len(record['components'])} components in {record['seconds']}s")
    if kubespray:
        build_for_checkout(found, defaults, str(version), record, Progress(), rebuild=rebuild)


@task(help={"json_": "print the store entries as JSON"})
@harness_errors
@checked(json_=Flag())
def artifacts_list(c, json_=False):
    """Show what is built: kits, and every store entry with its module, sha256, size and build time."""
    from harness.artifacts import listing

    print(listing.render(json_=json_))


@task
@harness_errors
def artifacts_prune(c):
    """Remove store entries and registry storages that no kit refers to any more."""
    from harness.artifacts import listing

    removed = listing.prune()
    print("\n".join(f"removed {r}" for r in removed) or "nothing to remove")


# -- labs --------------------------------------------------------------------
@task(help={
    "machines": f"number of machines (1-{lifecycle.MAX_MACHINES})",
    "suite": f"Debian suite of the guests: {', '.join(SUITES)}",
    "cpus": "vCPUs per machine (at most this host's cores)",
    "memory": "MiB of memory per machine (at least 256)",
    "name": "lab name (default: lab-XXXX)",
    "backend": f"machine backend: {', '.join(lifecycle.BACKENDS)}",
    "kubernetes": "boot the node image of this Kubernetes kit and serve its registry and files to the lab",
    "containerd": "sid with this containerd built from source (2.2-2.4; `invoke artifacts.build --containerd V`)",
})
@harness_errors
@checked(machines=Integer(1, lifecycle.MAX_MACHINES), suite=SUITE, cpus=Integer(1), memory=Integer(256, unit="MiB"),
         name=NEW_LAB, backend=Choice(*lifecycle.BACKENDS), kubernetes=KUBERNETES, containerd=CONTAINERD)
def lab_up(c, machines="1", suite=DEFAULT_SUITE, cpus="1", memory="1024", name=None, backend="libvirt",
           kubernetes=None, containerd=None):
    """Create a lab: an isolated network and N machines, up when SSH answers."""
    spec = lifecycle.plan_lab(machines, suite, cpus, memory, name, backend, kubernetes=kubernetes,
                              containerd=containerd)
    lab = lifecycle.up(spec, Progress())
    print(lab.name)


@task(help={"name": "the machine", "command": "run this command instead of a shell",
            "lab": "lab name (default: the only lab)"})
@harness_errors
@checked(name=MACHINE, command=Text(), lab=LAB)
def lab_ssh(c, name, command=None, lab=None):
    """SSH into machine NAME (pinned host key), or run one command there."""
    import shlex

    the_lab = Lab.chosen(lab)
    if command is not None:
        from harness.remote.ssh import SshRemote

        with SshRemote(the_lab.ssh_target(name)) as remote:
            result = remote.run(command, timeout=600)
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.exit_code:
            raise Exit(code=result.exit_code)
        return
    from harness.remote.interactive import shell_argv

    c.run(shlex.join(shell_argv(the_lab, name)), pty=True, warn=True)


@task
@harness_errors
def lab_status(c):
    """Show every lab, its machines, their state and addresses."""
    from harness.lab_status import status_lines

    print("\n".join(status_lines()))


@task(help={"name": "the lab to destroy", "all_": "remove every lab and every kubelab object no lab claims"})
@harness_errors
@checked(name=LAB, all_=Flag())
def lab_down(c, name=None, all_=False):
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
@checked(suite=SUITE, keep=Flag())
def demo(c, suite=DEFAULT_SUITE, keep=False):
    """Build the image, bring up 2 machines, show what each one is, tear down."""
    from harness import demo as the_demo

    the_demo.run(suite, keep, Progress())


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
    "kubespray": "kubespray scenarios: the kubespray checkout to run (else KUBELAB_KUBESPRAY, else install.kubespray)",
    "source": "as for artifacts.build: local clones of what is built from a git tag",
})
@harness_errors
@checked(name=SCENARIO, suite=SUITE, keep=Flag(), control=Flag(), dry_run=Flag(), kubernetes=KUBERNETES, lab=LAB,
         containerd=CONTAINERD, kubespray=KUBESPRAY, source=GIT_SOURCES)
def scenario_run(c, name, suite=None, keep=False, control=False, dry_run=False, kubernetes=None, lab=None,
                 containerd=None, kubespray=None, source=None):
    """Run a scenario: inject, observe the failure, recover, verify, report. Exit 0/1/2."""
    from harness.evidence.record import check_runs_dir
    from harness.scenario import overrides
    from harness.scenario.files import find
    from harness.scenario.load import load

    point_sources(source)
    asked = overrides.apply(load(find(name)), suite, kubernetes, containerd, control, kubespray, dry_run)
    scenario, suite = asked.scenario, asked.suite
    for w in scenario.warnings:  # before anything is created
        print(f"warning: {w}", file=sys.stderr)
    if dry_run:
        from harness.scenario.dryrun import plan_lines

        print("\n".join(plan_lines(scenario, suite or scenario.lab.suite, control)))
        return
    from harness.scenario.engine import Engine, Options
    from harness.scenario.labs import BackendLabs, PooledLabs

    check_runs_dir()
    host.prepare()
    from harness.tracks import track_of

    track_of(scenario.install).preflight(scenario, Progress())  # before any machine exists
    labs = PooledLabs(lab) if lab else BackendLabs()
    result = Engine(scenario, Options(suite=suite, keep=keep, control=control), labs, Progress()).run()
    print(result.directory)
    if result.exit_code:
        raise Exit(f"kubelab: {result.result}: {result.reason}", code=result.exit_code)


@task(help={"files": "scenario files (default: every scenarios/*.yaml)",
            "claims": "claims files besides claims/*.yaml (an author's own course)"}, iterable=["files", "claims"])
@harness_errors
@checked(files=Several(ExistingFile()), claims=Several(ExistingFile()))
def scenario_lint(c, files=None, claims=None):
    """Validate scenario and claims files; report every problem with file, line and field."""
    from harness.evidence.claims import all_files as claims_files
    from harness.scenario.lint_files import lint
    from harness.scenario.files import all_files

    linted = lint(files or all_files(), claims_files() + list(claims or []))
    for w in linted.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"{linted.files} scenario file(s) valid" + (f", {len(linted.warnings)} warning(s)" if linted.warnings else "")
          + f"; {linted.claims_files} claims file(s) valid")


@task(help={"run_dir": "a run folder (runs/<scenario>/<timestamp>)"})
@harness_errors
@checked(run_dir=RUN_FOLDER)
def report(c, run_dir):
    """Render report.md, report.html and junit.xml again from a run's run.json."""
    from harness.evidence.rerender import rerender

    for written in rerender(run_dir):
        print(written)


# -- matrix ----------------------------------------------------------------------------
def _check_rerun(rerun, resume: bool, scenarios) -> None:
    """--rerun only means something in a resumed run, and only for scenarios that run in it."""
    if not rerun:
        return
    if not resume:
        raise UsageError("--rerun: needs --resume --out FOLDER (the run whose finished scenarios to run again); "
                         "without --resume every scenario runs anyway")
    unknown = [n for n in rerun if n not in scenarios]
    if unknown:
        raise UsageError(f"--rerun: {', '.join(unknown)} not among the scenarios of this run; "
                         f"allowed: {', '.join(sorted(scenarios))}")


def _matrix_axes(scenario, kubernetes, suite, containerd, kubespray=None, dry_run=True):
    from harness.matrix import axes
    from harness.tracks import track_of

    found = axes.from_options(scenario, kubernetes or (), suite or (), containerd or (), kubespray, dry_run)
    if kubespray and not any(track_of(s.install).takes_checkout for s in found.scenarios.values()):
        raise UsageError("--kubespray: none of these scenarios installs with kubespray")
    for w in axes.warnings(found):
        print(f"warning: {w}", file=sys.stderr)
    return found


SCENARIOS = CommaList(SCENARIO)
KUBERNETES_ROWS = CommaList(KUBERNETES, extra=("host",))
SUITES_AXIS = CommaList(SUITE, empty_ok=True)
CONTAINERD_BUILT = CommaList(CONTAINERD)


@task(default=True, help={
    "scenario": "scenario names, comma-separated",
    "kubernetes": "Kubernetes releases, comma-separated (default: the kit's default)",
    "suite": "Debian suites for the containerd axis, comma-separated: bookworm (1.6), trixie (1.7), sid (2.x)",
    "containerd": "containerd releases built from source into sid (2.2-2.4), comma-separated: more columns",
    "out": "the matrix folder (default runs/matrix/<UTC stamp>); --resume reuses one",
    "deadline": "minutes; then what runs is stopped and torn down, and the rest is NOT RUN",
    "max_vcpus": "cap on the guests' vCPUs running at once (default: 2 x host cores)",
    "resume": "keep the cells of --out that already hold a complete run",
    "rerun": "with --resume: these scenarios run again where they finished (after their file changed)",
    "unsupported": "also run pairs upstream does not support",
    "compare": "a previous matrix.json: mark every cell that changed as `was -> now`",
    "dry_run": "print the plan, run nothing",
    "no_fanout": "boot a fresh lab for every scenario instead of restoring a cell's pooled lab",
    "kubespray": "the kubespray checkout of the kubespray scenarios (else KUBELAB_KUBESPRAY, else install.kubespray)",
})
@harness_errors
@checked(scenario=SCENARIOS, kubernetes=KUBERNETES_ROWS, suite=SUITES_AXIS, out=WritableFolder(),
         deadline=Positive("minutes"), max_vcpus=Integer(1), resume=Flag(), unsupported=Flag(),
         compare=MATRIX_RECORD, dry_run=Flag(), no_fanout=Flag(), containerd=CONTAINERD_BUILT, kubespray=KUBESPRAY,
         rerun=SCENARIOS)
def matrix_run(c, scenario, kubernetes=None, suite="sid", out=None, deadline=None, max_vcpus=None, resume=False,
               unsupported=False, compare=None, dry_run=False, no_fanout=False, containerd=None, kubespray=None,
               rerun=None):
    """Run scenarios across Kubernetes and containerd versions; pivot their facts into matrix.md/html."""
    import os
    import time

    from harness import paths
    from harness.matrix import prebuild, report, run, schedule
    from harness.matrix.verdict import verdict

    if resume and not out:
        raise UsageError("--resume needs --out MATRIX_FOLDER (the matrix to resume)")
    found = _matrix_axes(scenario, kubernetes, suite, containerd, kubespray, dry_run)
    _check_rerun(rerun, resume, found.scenarios)
    previous = report.load(compare) if compare else None
    folder = out or paths.project_root() / "runs" / "matrix" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    problem = "" if out else writable_folder_problem(folder)  # --out was checked with the options
    if problem:
        raise UsageError(f"the matrix folder {folder}: {problem}; give --out a folder this user can write")
    opts = run.Options(out=folder, deadline_min=deadline, max_vcpus=max_vcpus or 2 * (os.cpu_count() or 1),
                       memory_budget_mib=schedule.budget(host.meminfo()["MemTotal"] >> 20),
                       resume=resume, rerun=frozenset(rerun or ()), run_unsupported=unsupported,
                       fanout=not no_fanout)
    print("\n".join(run.plan_lines(found.cells, found.scenarios, opts)))
    if dry_run:
        return
    host.prepare()
    from harness.tracks import track_of

    for s in found.scenarios.values():  # before any machine: what each track needs (kubespray's downloads)
        for v in (found.axes["kubernetes"] if s.install.installs_kubernetes else []):
            track_of(s.install).preflight(s.with_kubernetes(v), Progress())
    prebuild.build_containerd(found.cells, found.scenarios, Progress())
    matrix = run.run(found.cells, found.scenarios, opts, found.axes, Progress())
    if previous:
        report.save(report.compare(matrix, previous, str(compare)), folder)
    print(folder / "matrix.md")
    ended = verdict(matrix)
    if ended.exit_code:
        raise Exit(f"kubelab: {ended.message}", code=ended.exit_code)


@task(help={"format_": "github or gitlab", "scenario": "as for matrix", "kubernetes": "as for matrix",
            "suite": "as for matrix", "deadline": "the harness deadline per cell job, minutes (the job timeout adds a margin)",
            "output": "write here instead of printing", "unsupported": "also export unsupported pairs",
            "containerd": "as for matrix"})
@harness_errors
@checked(format_=Choice("github", "gitlab"), scenario=SCENARIOS, kubernetes=KUBERNETES_ROWS, suite=SUITES_AXIS,
         deadline=Integer(1, unit="minutes"), output=WritableFile(), unsupported=Flag(), containerd=CONTAINERD_BUILT)
def matrix_export(c, format_, scenario, kubernetes=None, suite="sid", deadline="150", output=None, unsupported=False,
                  containerd=None):
    """One CI job per matrix cell, for self-hosted libvirt runners, plus a merge job."""
    from harness.matrix import export

    found = _matrix_axes(scenario, kubernetes, suite, containerd)
    text = export.export(format_, [cl for cl in found.cells if cl.supported or unsupported], deadline)
    if output:
        output.write_text(text)
        print(output)
    else:
        print(text, end="")


@task(help={"out": "folder for the merged matrix", "parts": "glob of the jobs' matrix.json files"})
@harness_errors
@checked(out=WritableFolder(), parts=Glob())
def matrix_merge(c, out, parts):
    """Combine the matrix.json of several jobs into one report."""
    from harness.matrix import report

    print(report.save(report.merge([report.load(f) for f in parts]), out))


ns = Collection(doctor, demo, report)
ns.add_collection(Collection("scenario", run=scenario_run, lint=scenario_lint))
ns.add_collection(Collection("images", build=images_build, list=images_list, prune=images_prune, box=images_box))
ns.add_collection(Collection("artifacts", build=artifacts_build, list=artifacts_list, prune=artifacts_prune))
ns.add_collection(Collection("lab", up=lab_up, ssh=lab_ssh, status=lab_status, down=lab_down))
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
@checked(lab=LAB, kubeconfig=ExistingFile(), ssh=SSH_TARGETS, identity=ExistingFile(), known_hosts=ExistingFile(),
         layers=VERIFY_LAYERS, image=Text(), dry_run=Flag())
def verify(c, lab=None, kubeconfig=None, ssh=None, identity=None, known_hosts=None, layers="all", image=None,
           dry_run=False):
    """Check a running cluster layer by layer, whatever installed it. Exit 0/1/2."""
    import os
    from pathlib import Path

    from harness import verify as layers_of
    from harness.verify.access import TOOLBOX
    from harness.verify.session import lab_connector, ssh_connector, verify as run_verify

    chosen = layers  # in run order (cli_values.verify_layers)
    if bool(lab) == bool(kubeconfig):
        raise UsageError("give either --lab LAB or --kubeconfig FILE --ssh USER@HOST,... --known-hosts FILE")
    if lab and (ssh or identity or known_hosts):
        raise UsageError("--ssh, --identity and --known-hosts go with --kubeconfig; a lab brings its own keys")
    if kubeconfig and not ssh:
        raise UsageError("--kubeconfig needs --ssh USER@HOST,...: the layers read files on the nodes too")
    if dry_run:
        for name in chosen:
            print(f"[verify] {name}: {layers_of.layer(name).READS}")
        return
    from harness.evidence.record import check_runs_dir

    check_runs_dir()
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


# -- evidence book ------------------------------------------------------------------------------
@task(help={
    "claims": "the claims file (e.g. claims/course.yaml)",
    "chapter": "only these chapters of it, comma-separated",
    "kubernetes": "Kubernetes releases for every kubeadm proof, comma-separated (default: each proof's own)",
    "suite": "Debian suites (containerd) for every proof, comma-separated (default: each proof's own)",
    "repeat": "run every scenario this many times; timings become median, min and max",
    "out": "the book folder (default runs/book/<UTC stamp>); --resume reuses one",
    "compare": "a previous book folder: what changed, listed first; timings snippets kept inside its spread",
    "resume": "keep the runs of --out that already finished; with all finished, the book is written again",
    "rerun": "with --resume: these scenarios run again where they finished (after their file changed)",
    "deadline": "minutes for all the runs; then what runs is stopped, and the rest is NOT RUN",
    "dry_run": "print the claims, the scenarios and the cells, run nothing",
})
@harness_errors
@checked(claims=CLAIMS_FILE, chapter=CommaList(Text()), kubernetes=CommaList(KUBERNETES), suite=CommaList(SUITE),
         repeat=Integer(1), out=WritableFolder(), compare=BOOK_FOLDER, resume=Flag(), deadline=Positive("minutes"),
         dry_run=Flag(), rerun=SCENARIOS)
def evidence(c, claims, chapter=None, kubernetes=None, suite=None, repeat=None, out=None, compare=None, resume=False,
             deadline=None, dry_run=False, rerun=None):
    """Run every scenario the claims need and write the evidence book: verdicts, verbatim lines, snippets."""
    import os
    import time

    from harness import paths
    from harness.evidence import book, book_compare, book_plan, book_render
    from harness.evidence import claims as claims_files
    from harness.matrix import run as matrix_run
    from harness.matrix import schedule

    started = time.time()
    repeat = repeat or 1
    claimset = claims_files.load([claims])  # every problem, exit 2, before anything starts
    if resume and not out:
        raise UsageError("--resume needs --out BOOK_FOLDER (the book to resume)")
    previous = book.load(compare) if compare else None
    plan = book_plan.make(claimset, chapter or (), kubernetes or (), suite or ())
    _check_rerun(rerun, resume, plan.scenarios)
    folder = out or paths.project_root() / "runs" / "book" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    problem = "" if out else writable_folder_problem(folder)  # --out was checked with the options
    if problem:
        raise UsageError(f"the book folder {folder}: {problem}; give --out a folder this user can write")
    opts = matrix_run.Options(out=folder / "runs" / "1", max_vcpus=2 * (os.cpu_count() or 1),
                              memory_budget_mib=schedule.budget(host.meminfo()["MemTotal"] >> 20), fanout=True)
    print("\n".join(book_plan.plan_lines(plan, repeat) + matrix_run.plan_lines(list(plan.cells), plan.scenarios, opts)))
    if dry_run:
        return
    if plan.cells:
        host.prepare()
    folders = book_plan.run(plan, folder, repeat, resume, deadline, opts.max_vcpus, opts.memory_budget_mib, Progress(),
                            rerun=frozenset(rerun or ()))
    record = book.build(plan, folders, folder)
    if previous is not None:
        book_compare.compare(record, previous, str(compare))
    record.update(built_at=time.time(), wall_s=round(time.time() - started, 1), **book.resumed(record, started))
    book_render.write(folder, record, compare)
    print(folder / "index.md")
    code = book.exit_code(record)
    if code:
        counts = {v: sum(1 for x in record["claims"] if x["verdict"] == v) for v in book.VERDICTS}
        raise Exit(f"kubelab: evidence: {counts[book.FAILS]} claim(s) do not hold, {counts[book.UNSEEN]} not observed"
                   + ("; some runs broke or did not run" if code == 2 else ""), code=code)


ns.add_task(evidence)


@task(help={"serve": "then serve the site on http://127.0.0.1:8000 until Ctrl-C (mkdocs serve)",
            "book": "first copy a built evidence book (its folder) into docs/books/<--chapter>/",
            "chapter": "the chapter name --book goes under (host, kubeadm, kubespray)",
            "out": "where the site is built (default build/site)"})
@harness_errors
@checked(book=Text(), chapter=Text(), out=WritableFolder(), serve=Flag())
def docs(c, serve=False, book=None, chapter=None, out=None):
    """Write the generated pages (scenarios, references), then build the site strictly with MkDocs."""
    from pathlib import Path

    from harness import paths
    from harness.docs import site

    if book:
        if not chapter:
            raise UsageError("--book needs --chapter: the chapter name its snippets go under (docs/books/<chapter>/)")
        print(f"book: {site.import_book(Path(book), chapter)}")
    for page in site.write():
        print(f"wrote {page}" if page.startswith(("mkdocs.yml", "README.md")) else f"wrote docs/{page}")
    folder = Path(out) if out else paths.project_root() / "build" / "site"
    site.build(folder)
    print(folder / "index.html")
    if serve:
        site.serve()


ns.add_task(docs)
