"""Progress for long work: a live line on a terminal, plain lines otherwise."""

import sys
import time
from contextlib import contextmanager


class Progress:
    def __init__(self, stream=None, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()

    def _emit(self, text: str, final: bool = True) -> None:
        if self.quiet:
            return
        line = f"[{time.monotonic() - self.t0:7.1f}s] {text}"
        try:
            if self.live:
                self.stream.write("\r\033[K" + line + ("\n" if final else ""))
            elif final:
                self.stream.write(line + "\n")
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            # whoever read the progress is gone (a killed parent, a closed pipe): the run and
            # above all its teardown go on; the record and the report are its output
            self.quiet = True

    def note(self, text: str) -> None:
        self._emit(text)

    def update(self, text: str) -> None:
        """A transient status; only shown on a terminal."""
        self._emit(text, final=False)

    @contextmanager
    def step(self, text: str):
        start = time.monotonic()
        self._emit(f"{text} ...", final=not self.live)
        try:
            yield self
        except BaseException as exc:
            self._emit(f"{text}: FAILED after {time.monotonic() - start:.1f}s ({type(exc).__name__})")
            raise
        self._emit(f"{text}: done in {time.monotonic() - start:.1f}s")
