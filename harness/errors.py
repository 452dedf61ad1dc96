"""The one exception tree of kubelab. Imports nothing from harness.

Exceptions carry data and format themselves; they never log and never exit.
Only tasks.py turns a HarnessError into a process exit code.
"""


class HarnessError(Exception):
    """Something kubelab could not do. `str()` says what, where and what to do."""

    exit_code = 2


class UsageError(HarnessError, ValueError):
    """Bad input from the user, refused before anything was created."""


class HostError(HarnessError):
    """The host cannot run labs as it is (missing package, daemon down, ...)."""


class ImageError(HarnessError):
    """An image could not be built, found or read."""


class ArtifactError(HarnessError):
    """A kit artifact (Go build, OCI image, registry content) could not be made or read."""


class KitNotBuilt(ArtifactError):
    """No kit record for a Kubernetes version: nothing was built for it yet (the message names the build)."""


class BuildFailed(ArtifactError):
    """A build command failed: names the component, the exact command and its last lines."""

    def __init__(self, component: str, command: str, status, lines: list[str], workdir: str = ""):
        self.component = component
        self.command = command
        self.status = status  # the command's own exit status (None: timed out); kubelab's exit stays 2
        self.lines = lines
        where = f"\n  in {workdir}" if workdir else ""
        how = "timed out" if status is None else f"exited {status}"
        tail = "\n".join("    " + l for l in lines[-25:]) or "    (no output)"
        super().__init__(f"building {component}: `{command}` {how}{where}\n  last output:\n{tail}")


class BackendError(HarnessError):
    """A machine backend failed."""


class BackendUnavailable(BackendError):
    """The backend cannot be used on this host; the message says why and how to fix it."""


class VagrantError(BackendError):
    """A `vagrant` command failed: the command, its exit code and its last lines."""


class Unsupported(BackendError):
    """The backend does not implement this operation."""


class MachineTimeout(BackendError, TimeoutError):
    """A machine did not reach a state in time."""


class MachineLost(BackendError):
    """A lab machine stopped under the run, by the host's doing: its QEMU process ended, or QEMU
    paused it on a disk error. Names the machine and the cause libvirt gives."""


class LabError(HarnessError):
    """A lab's state folder is missing, broken or in use."""


class RemoteError(HarnessError):
    """Talking to a machine over SSH failed."""


class ConnectError(RemoteError, ConnectionError):
    """Could not connect or authenticate. Never carries a key or password."""

    def __init__(self, target, reason):
        self.target = target
        self.reason = reason
        super().__init__(f"ssh {target.describe()}: {reason}")


class HostKeyMismatch(ConnectError):
    """The machine presented a host key other than the one kubelab pinned for it."""


class CommandTimedOut(RemoteError, TimeoutError):
    """A remote command ran longer than its timeout; carries what it printed so far."""

    def __init__(self, result, timeout):
        self.result = result
        self.timeout = timeout
        super().__init__(
            f"{result.host}: `{result.command}` did not finish within {timeout:g}s"
            + result.tail_block()
        )


class CommandFailed(RemoteError):
    """A remote command exited non-zero where success was required."""

    def __init__(self, result):
        self.result = result
        super().__init__(
            f"{result.host}: `{result.command}` exited {result.exit_code}" + result.tail_block()
        )


class ScenarioError(HarnessError):
    """Scenario files with problems; every problem names file, line and field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        n = len(problems)
        super().__init__(f"{n} problem{'s' if n != 1 else ''} in scenario files:\n  " + "\n  ".join(problems))


class ClaimsError(ScenarioError):
    """Claims files with problems (and the scenario files they cite); every problem names file and line."""

    def __init__(self, problems: list[str]):
        super().__init__(problems)
        n = len(problems)
        self.args = (f"{n} problem{'s' if n != 1 else ''} in claims files:\n  " + "\n  ".join(problems),)

    def __str__(self) -> str:
        return self.args[0]


class YamlProblem(Exception):
    """One problem in one YAML file, at a line; collected into a ScenarioError."""

    def __init__(self, file: str, line: int, message: str):
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file}:{line}: {message}")


class PhaseError(HarnessError):
    """A scenario phase could not do its job (exit 2)."""
