"""Progress for long work: a live line on a terminal, plain lines otherwise.

Whatever is under way (a build step, a command, a wait) is an activity: on a
terminal its line is redrawn every second with its elapsed time and its latest
detail; in a log, a line says it is still running once a minute, so a quiet
ten-minute `go build` or a wait for a cluster never looks like a hang. Every
line is one line: longer text is cut to its first line with a count of the
rest, which the run's record keeps in full.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from contextlib import contextmanager

TICK = 1.0  # a terminal's live line is redrawn this often
HEARTBEAT = 60.0  # a log gets a "still running" line this often
LIMIT = 160  # characters of a reading's first line on the console


def one_line(text, where: str = "", limit: int | None = LIMIT) -> str:
    """The first non-empty line of `text`, cut to `limit` characters, with a count of the lines
    left out: "(+57 lines in the record)" with where="in the record", "(+57 more lines)" without."""
    lines = str(text).splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    first = lines[0].rstrip() if lines else ""
    if limit and len(first) > limit:
        first = first[:limit - 1] + "…"
    rest = len(lines) - 1
    if rest > 0:
        noun = "line" if rest == 1 else "lines"
        first += f" (+{rest} {noun} {where})" if where else f" (+{rest} more {noun})"
    return first


class Activity:
    """Something under way: what it is, since when, and the latest thing it said."""

    def __init__(self, text: str):
        self.text = text
        self.started = self.beat = time.monotonic()
        self.detail = ""

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def line(self) -> str:
        return f"{self.text} ... {self.elapsed():.0f}s" + (f": {self.detail}" if self.detail else "")


class Progress:
    def __init__(self, stream=None, quiet: bool = False, heartbeat: float = HEARTBEAT, tick: float = TICK):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self.heartbeat, self.tick = heartbeat, tick
        self._lock = threading.RLock()  # matrix cells and SSH waits report from threads
        self._open: list[Activity] = []
        self._ticker: threading.Thread | None = None

    def _emit(self, text: str, final: bool = True) -> None:
        if self.quiet:
            return
        prefix = f"[{time.monotonic() - self.t0:7.1f}s] "
        text = one_line(text, limit=None)  # a log keeps a long line whole; a terminal's is cut below
        if self.live:  # a live line that wrapped could not be redrawn in place
            width = shutil.get_terminal_size((120, 24)).columns - len(prefix) - 1
            text = text if len(text) <= width else text[:max(width - 1, 10)] + "…"
        line = prefix + text
        with self._lock:
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
        """A transient status: the latest detail of what is under way; only shown on a terminal
        (and in a log's next "still running" line)."""
        with self._lock:
            if self._open:
                self._open[-1].detail = one_line(text)
                if self.live:
                    self._emit(self._open[-1].line(), final=False)
                return
        self._emit(text, final=False)

    @contextmanager
    def activity(self, text: str):
        """While the block runs: a live line with its elapsed time, or a heartbeat in a log.
        It prints no line of its own when it ends; the caller says how it went."""
        act = Activity(text)
        with self._lock:
            self._open.append(act)
            if self.live:
                self._emit(act.line(), final=False)
            if self._ticker is None and not self.quiet:
                self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
                self._ticker.start()
        try:
            yield act
        finally:
            with self._lock:
                self._open.remove(act)

    def _tick(self) -> None:
        while True:
            time.sleep(self.tick)
            with self._lock:
                if not self._open or self.quiet:
                    self._ticker = None
                    return
                act, now = self._open[-1], time.monotonic()
                if self.live:
                    self._emit(act.line(), final=False)
                elif now - act.beat >= self.heartbeat:
                    act.beat = now
                    self._emit(f"{act.text}: still running after {act.elapsed():.0f}s"
                               + (f" ({act.detail})" if act.detail else ""))

    @contextmanager
    def step(self, text: str):
        start = time.monotonic()
        if not self.live:
            self._emit(f"{text} ...")
        with self.activity(text):
            try:
                yield self
            except BaseException as exc:
                self._emit(f"{text}: FAILED after {time.monotonic() - start:.1f}s ({type(exc).__name__})")
                raise
        self._emit(f"{text}: done in {time.monotonic() - start:.1f}s")
