"""Stop signals become one KeyboardInterrupt, so every way of cancelling a run tears down.

CI runners, `timeout` and systemd cancel with SIGTERM, a closed terminal sends
SIGHUP, and a job started in the background by a non-interactive shell
inherits SIGINT as *ignored*. Each of these would otherwise leave machines,
networks and the lab's servers behind, and no report. `install()` makes
SIGINT, SIGTERM and SIGHUP raise `Interrupted` (a KeyboardInterrupt, which
lab and scenario code already answer by tearing down). A second signal while
that teardown runs is reported and ignored: teardown is what stops leaks.
"""

from __future__ import annotations

import signal
import sys
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


_received: list[int] = []


def _handler(signum, frame):
    if _received:
        sys.stderr.write(f"\nkubelab: {signal.Signals(signum).name} again: still cleaning up, please wait\n")
        return
    _received.append(signum)
    raise Interrupted(signum)


_handled: list[bool] = []


def raise_if_stopped() -> None:
    """Raise the stop again if a signal arrived and nobody has handled it yet: some libraries
    swallow KeyboardInterrupt (kubernetes' ws_client turns it into an ApiException with
    status 0, kubernetes/stream/ws_client.py), and a poll loop must not go on after a stop."""
    if _received and not _handled:
        raise Interrupted(_received[0])


def handled() -> None:
    """The stop reached the code that tears down: raise_if_stopped() is quiet from now on."""
    if _received:
        _handled.append(True)


def install() -> None:
    """Only the main thread may set handlers; elsewhere this is a no-op."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOP_SIGNALS:
        signal.signal(signum, _handler)


def exit_code(exc: KeyboardInterrupt) -> int:
    return exc.exit_code if isinstance(exc, Interrupted) else 130


def stop_if_signalled() -> None:
    """Raise the stop again, handled or not: for a script that goes on after a run that answered
    the stop by tearing down and returning (Engine.run), so it makes nothing more."""
    if _received:
        raise Interrupted(_received[0])


def run(main) -> int:
    """A script's main under the same stop signals as a task (benchmarks that make labs): a
    cancel tears down what it made instead of killing the process where it stands. Its exit code."""
    install()
    try:
        return main() or 0
    except KeyboardInterrupt as exc:
        sys.stderr.write(f"\ninterrupted ({exc or 'SIGINT'}): what was made is torn down\n")
        return exit_code(exc)
