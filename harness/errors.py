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


class BackendError(HarnessError):
    """A machine backend failed."""


class BackendUnavailable(BackendError):
    """The backend cannot be used on this host; the message says why and how to fix it."""


class Unsupported(BackendError):
    """The backend does not implement this operation."""


class MachineTimeout(BackendError, TimeoutError):
    """A machine did not reach a state in time."""


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
