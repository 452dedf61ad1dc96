"""A component's source from a git repository at a pinned tag: the second way the kit obtains
one, for projects whose module path the Go module proxy does not serve (kubernetes/dns's
node-cache, the cluster-proportional-autoscaler, calico's monorepo, nerdctl at kubespray's pin).

Each source has its upstream repository and tag; the user points kubelab at a local clone or a
mirror of it (an option or an environment variable, as `--kubespray` does). Before any build the
clone is checked: it is a git repository, it is the right project (its go.mod names the module),
and it has the tag. A problem is refused naming the component, the version wanted and how to
provide it. The build then reads an export of exactly the tagged tree (never the clone's work
tree, which the user may have changed), kept in the cache by commit, and the manifest records
repository, tag and commit. kubelab never clones from the network itself: the host that builds
the kit may be offline, and a clone is the user's to make once (docs/kit.md says how).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import UsageError
from .components import Tree


@dataclass(frozen=True)
class GitSource:
    component: str      # the kit's name for it (node-cache)
    upstream: str       # the repository a user clones (https://github.com/kubernetes/dns)
    module: str         # what its go.mod's `module` line says (k8s.io/dns)
    env: str            # the environment variable that points at a clone (KUBELAB_SRC_DNS)
    tag_format: str = "v{version}"  # a release's tag (kubernetes/dns tags without the v)

    def tag(self, version: str) -> str:
        """The tag of a release as kubespray names it (`1.8.8` -> `v1.8.8`)."""
        return self.tag_format.format(version=str(version).lstrip("v"))

    def how(self, tag: str) -> str:
        """How a user provides it: a clone with the tag, named by `--source` or the variable."""
        return (f"`git clone --branch {tag} {self.upstream} PATH` (or a clone of your mirror of it), then "
                f"`--source {self.component}=PATH` or {self.env}=PATH")


@dataclass(frozen=True)
class Checkout:
    source: GitSource
    path: Path          # the clone
    tag: str
    commit: str         # what the tag points at

    def record(self) -> dict:
        """What the manifest keeps of it."""
        return {"repository": str(self.path), "upstream": self.source.upstream, "tag": self.tag,
                "commit": self.commit}


def parse(values: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--source NAME=PATH` values -> {NAME: PATH}; an unknown name or a missing `=` is refused."""
    out = {}
    for value in values or ():
        name, eq, where = value.partition("=")
        if not eq or not where or name not in REPOSITORIES:
            raise UsageError(f"--source {value}: give NAME=PATH, NAME one of {', '.join(sorted(REPOSITORIES))}")
        out[name] = where
    return out


def point(given: dict[str, str]) -> None:
    """Clones named on the command line, as their environment variables, so that what this
    command starts (a matrix's runs, a book's) finds them too."""
    for name, where in given.items():
        os.environ[REPOSITORIES[name].env] = str(Path(where).expanduser().resolve())


def _git(path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C"))


def resolve(source: GitSource, tag: str) -> Checkout:
    """The clone the source's environment variable names (`--source` sets it), checked at `tag`;
    UsageError naming the component, the version and how to provide it, before anything is built."""
    where = os.environ.get(source.env, "")
    wanted = f"{source.component} {tag}"
    if not where:
        raise UsageError(f"{wanted}: no source: the Go module proxy does not serve {source.module}; "
                         f"provide a clone: {source.how(tag)}")
    path = Path(where).expanduser()
    if not path.is_dir():
        raise UsageError(f"{wanted}: {path} is not a folder; {source.how(tag)}")
    if _git(path, "rev-parse", "--git-dir").returncode != 0:
        raise UsageError(f"{wanted}: {path} is not a git repository; {source.how(tag)}")
    commit = _git(path, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
    if commit.returncode != 0:
        near = _git(path, "tag", "--list", "--sort=-version:refname").stdout.split()[:5]
        raise UsageError(f"{wanted}: {path} has no tag {tag}" + (f" (its newest: {', '.join(near)})" if near else
                                                                 " (it has no tags: a shallow clone?)")
                         + f"; `git -C {path} fetch --tags`, or {source.how(tag)}")
    gomod = _git(path, "show", f"{tag}:go.mod")
    module = next((line.split()[1] for line in gomod.stdout.splitlines()
                   if line.startswith("module ") and len(line.split()) > 1), "")
    if module != source.module:
        said = f"its go.mod at {tag} says module {module}" if module else f"it has no go.mod at {tag}"
        raise UsageError(f"{wanted}: {path} is not a clone of {source.upstream} ({said}, not {source.module}); "
                         f"{source.how(tag)}")
    return Checkout(source, path, tag, commit.stdout.strip())


def tree(checkout: Checkout) -> Path:
    """The tagged tree, exported once into the cache by commit (the clone's work tree is the user's)."""
    dest = paths.cache_dir() / "src" / checkout.source.component / checkout.commit
    if (dest / ".kubelab-exported").is_file():
        return dest
    work = dest.with_name(f".{checkout.commit}-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        archive = subprocess.run(["git", "-C", str(checkout.path), "archive", "--format=tar", checkout.commit],
                                 capture_output=True, timeout=600, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive, capture_output=True, timeout=600, check=True)
        (work / ".kubelab-exported").write_text(f"{checkout.source.upstream} {checkout.tag} {checkout.commit}\n")
        shutil.rmtree(dest, ignore_errors=True)  # a half export of a killed build
        work.rename(dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return dest


def prepared(source: GitSource, version: str) -> Tree:
    """Release `version` of `source` ready to build: the clone checked, its tag exported."""
    checkout = resolve(source, source.tag(version))
    path = tree(checkout)
    return Tree(str(path), source.module, checkout.tag, checkout.record(), (path / "vendor").is_dir())


# What kubespray's default cluster needs and the Go module proxy does not serve (their module
# paths are refused there), each from its upstream repository's release tags.
NERDCTL = GitSource("nerdctl", "https://github.com/containerd/nerdctl", "github.com/containerd/nerdctl/v2",
                    "KUBELAB_SRC_NERDCTL")
NODE_CACHE = GitSource("node-cache", "https://github.com/kubernetes/dns", "k8s.io/dns", "KUBELAB_SRC_DNS",
                       tag_format="{version}")
AUTOSCALER = GitSource("cluster-proportional-autoscaler",
                       "https://github.com/kubernetes-sigs/cluster-proportional-autoscaler",
                       "github.com/kubernetes-sigs/cluster-proportional-autoscaler", "KUBELAB_SRC_AUTOSCALER")
CALICO = GitSource("calico", "https://github.com/projectcalico/calico", "github.com/projectcalico/calico",
                   "KUBELAB_SRC_CALICO")
REPOSITORIES = {s.component: s for s in (NERDCTL, NODE_CACHE, AUTOSCALER, CALICO)}
