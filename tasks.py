"""kubelab's command line: `invoke --list` shows every task.

Tasks parse flags and call the harness; a HarnessError becomes a clean exit
with its message (exit code 2: the harness or the host broke, 1: a usage
problem the message explains).
"""

from __future__ import annotations

import functools
import json
import shlex
import sys
import time

from invoke import Collection, Exit, task

from harness import host, lifecycle
from harness.errors import HarnessError, UsageError
from harness.images import build as image_build
from harness.images import store
from harness.images.recipe import DEFAULT_SUITE, SUITES, Recipe
from harness.lab import Lab
from harness.progress import Progress


def harness_errors(fn):
    """Turn HarnessError into a one-message exit; never a traceback for known failures."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except UsageError as exc:
            raise Exit(f"kubelab: {exc}", code=1) from None
        except HarnessError as exc:
            raise Exit(f"kubelab: {exc}", code=exc.exit_code) from None
        except KeyboardInterrupt:
            raise Exit("kubelab: interrupted", code=130) from None

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
@task(help={"suite": f"Debian suite: {', '.join(SUITES)}", "rebuild": "build even if cached"})
@harness_errors
def images_build(c, suite=DEFAULT_SUITE, rebuild=False):
    """Build (or reuse) the guest image of a Debian suite, offline from Debian's packages."""
    host.prepare()
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
    current = {Recipe.debian(s).image_id for s in SUITES}
    for image in store.all_images():
        if image.id not in current:
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


# -- labs --------------------------------------------------------------------
@task(help={
    "machines": "number of machines (1-16)",
    "suite": f"Debian suite of the guests: {', '.join(SUITES)}",
    "cpus": "vCPUs per machine",
    "memory": "MiB of memory per machine",
    "name": "lab name (default: lab-XXXX)",
    "backend": "machine backend",
})
@harness_errors
def lab_up(c, machines=1, suite=DEFAULT_SUITE, cpus=1, memory=1024, name=None, backend="libvirt"):
    """Create a lab: an isolated network and N machines, up when SSH answers."""
    spec = lifecycle.plan_lab(int(machines), suite, int(cpus), int(memory), name, backend)
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
})
@harness_errors
def scenario_run(c, name, suite=None, keep=False, control=False, dry_run=False):
    """Run a scenario: inject, observe the failure, recover, verify, report. Exit 0/1/2."""
    from harness.scenario.load import find, load

    scenario = load(find(name))
    if suite:
        from harness.images.recipe import check_suite

        check_suite(suite)
    if dry_run:
        from harness.scenario.dryrun import plan_lines

        print("\n".join(plan_lines(scenario, suite or scenario.lab.suite, control)))
        return
    from harness.scenario.engine import Engine, Options
    from harness.scenario.labs import BackendLabs

    host.prepare()
    result = Engine(scenario, Options(suite=suite, keep=keep, control=control), BackendLabs(), Progress()).run()
    print(result.directory)
    if result.exit_code:
        raise Exit(f"kubelab: {result.result}: {result.reason}", code=result.exit_code)


@task(help={"files": "scenario files (default: every scenarios/*.yaml)"}, iterable=["files"])
@harness_errors
def scenario_lint(c, files=None):
    """Validate scenario files; report every problem with file, line and field."""
    from pathlib import Path

    from harness.scenario.load import ScenarioError, all_files, load_into

    paths = [Path(f) for f in files] if files else all_files()
    problems: list[str] = []
    for path in paths:
        load_into(path, problems)
    if problems:
        raise ScenarioError(problems)
    print(f"{len(paths)} scenario file(s) valid")


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
ns.add_collection(Collection("lab", up=lab_up, ssh=lab_ssh, status=lab_status, down=lab_down))
