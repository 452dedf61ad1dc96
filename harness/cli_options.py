"""Task options, checked before any work starts.

invoke hands a task its options as strings (or bools for flags). A task
declares a kind for each option with `@checked(...)`; the kinds convert the
strings and refuse a bad one before the task's body runs, with one line:
the option, the value, the problem and what is allowed. Every kind also names
values it refuses (`refused`), so one test can try every option of every task.

Defaults in a task's signature are strings too (or None): invoke converts an
option whose default is an int itself, and a bad value then ends in its
traceback instead of here.
"""

from __future__ import annotations

import functools
import glob
import inspect
import math
import os
import tempfile
from pathlib import Path

from .errors import HarnessError, UsageError


class Refused(Exception):
    """A value a kind does not take; the problem, without the option's name."""


class Kind:
    allowed = ""  # what the kind takes, for the message
    refused: tuple[str, ...] = ()  # values it refuses (the task walk tries each of them)
    sample: str | None = None  # a value it takes, harmless to pass (relative paths: in a scratch folder)

    def convert(self, raw):
        """The value the task works with, or Refused."""
        raise NotImplementedError

    def check(self, option: str, raw):
        if raw is None:
            return None  # not given and no default: the task decides
        try:
            return self.convert(raw)
        except Refused as exc:
            why = f"{exc}; " if str(exc) else ""
            raise UsageError(f"{flag(option)} {raw!r}: {why}allowed: {self.allowed}") from None
        except UsageError as exc:  # a harness check's own message, made one line
            text = one_line(str(exc))
            if not text.startswith(flag(option)):
                text = f"{flag(option)} {raw!r}: {text}"
            raise UsageError(text if "allowed: " in text else f"{text}; allowed: {self.allowed}") from None


def flag(option: str) -> str:
    """The flag invoke makes of a parameter: dry_run -> --dry-run, json_ -> --json."""
    return "--" + option.strip("_").replace("_", "-")


def one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


class Flag(Kind):
    """An on/off flag: invoke parses it and gives no value to refuse."""

    allowed = "no value (a flag)"

    def convert(self, raw):
        return bool(raw)


class Text(Kind):
    """Any non-empty text (a command to run, say)."""

    allowed = "any non-empty text"
    refused = ("",)
    sample = "true"

    def convert(self, raw):
        if not str(raw).strip():
            raise Refused("empty")
        return str(raw)


class Integer(Kind):
    def __init__(self, low: int, high: int | None = None, unit: str = ""):
        self.low, self.high, self.unit = low, high, unit
        span = f"{low}..{high}" if high is not None else f"at least {low}"
        self.allowed = f"an integer {span}" + (f" ({unit})" if unit else "")
        self.refused = ("abc", "1.5", str(low - 1)) + ((str(high + 1),) if high is not None else ())
        self.sample = str(low)

    def convert(self, raw):
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise Refused("not an integer") from None
        if value < self.low or (self.high is not None and value > self.high):
            raise Refused("out of range")
        return value


class Positive(Kind):
    """A number greater than zero (minutes, say)."""

    refused = ("abc", "0", "-5", "nan", "inf")
    sample = "1"

    def __init__(self, unit: str):
        self.allowed = f"a number greater than 0 ({unit})"

    def convert(self, raw):
        try:
            value = float(str(raw).strip())
        except ValueError:
            raise Refused("not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise Refused("not greater than 0")
        return value


class Choice(Kind):
    def __init__(self, *values: str):
        self.values = values
        self.allowed = ", ".join(values)
        self.refused = ("no-such-choice", "")
        self.sample = values[0]

    def convert(self, raw):
        if raw not in self.values:
            raise Refused("unknown")
        return raw


class CommaList(Kind):
    """Values separated by commas, each of the `item` kind; the items, deduplicated, in order."""

    def __init__(self, item: Kind, extra: tuple[str, ...] = (), empty_ok: bool = False):
        self.item, self.extra, self.empty_ok = item, extra, empty_ok
        also = f" (or {', '.join(extra)})" if extra else ""
        self.allowed = f"comma-separated, each {item.allowed}{also}" + (", or empty" if empty_ok else "")
        self.refused = tuple(dict.fromkeys(r for r in item.refused if r)) + (() if empty_ok else (",",))

    @property
    def sample(self):
        return self.item.sample

    def convert(self, raw):
        items = tuple(dict.fromkeys(s.strip() for s in str(raw).split(",") if s.strip()))
        if not items and not self.empty_ok:
            raise Refused("give at least one value")
        out = []
        for text in items:
            if text in self.extra:
                out.append(text)
                continue
            try:
                out.append(self.item.convert(text))
            except Refused as exc:
                raise Refused(f"{text!r}: {exc or 'not one of them'}") from None
        return tuple(out)


class Name(Kind):
    """A name kubelab makes things with (a lab): lowercase letters, digits and single dashes."""

    def __init__(self, what: str, limit: int):
        self.what, self.limit = what, limit
        self.allowed = (f"a {what} name of lowercase letters, digits and single dashes, starting with a letter, "
                        f"at most {limit} characters")
        self.refused = ("Bad_Name!", "a" * (limit + 1))
        self.sample = f"{what}1"

    def convert(self, raw):
        from .lab import check_name

        if check_name(self.what, raw, self.limit):
            raise Refused("not such a name")
        return raw


class Called(Kind):
    """A value a harness function checks and converts (a version, a scenario name, a lab):
    it raises UsageError (or another HarnessError) with its own message."""

    def __init__(self, check, allowed: str, refused: tuple[str, ...], sample=None):
        self.fn, self.allowed, self.refused, self._sample = check, allowed, refused, sample

    @property
    def sample(self):
        return self._sample() if callable(self._sample) else self._sample

    def convert(self, raw):
        try:
            return self.fn(raw)
        except HarnessError as exc:
            raise UsageError(str(exc)) from None


class ExistingFile(Kind):
    allowed = "an existing file"
    refused = ("/nonexistent-kubelab/file.json", "/")

    def convert(self, raw):
        path = Path(raw)
        if not path.is_file():
            raise Refused("not a file" if path.exists() else "no such file")
        return path


class WritableFolder(Kind):
    """A folder kubelab can write into: it exists and is writable, or it can be made."""

    allowed = "a folder this user can write, or create"
    refused = ("/dev/null/kubelab", "/proc/kubelab")
    sample = "out"

    def convert(self, raw):
        path = Path(raw)
        problem = writable_folder_problem(path)
        if problem:
            raise Refused(problem)
        return path


class WritableFile(Kind):
    allowed = "a file path in a folder this user can write"
    refused = ("/dev/null/out", "/proc/kubelab.yml")
    sample = "out.yml"

    def convert(self, raw):
        path = Path(raw)
        if path.is_dir():
            raise Refused("a folder")
        problem = writable_folder_problem(path.parent if str(path.parent) else Path("."), create=False)
        if problem:
            raise Refused(problem)
        return path


class Glob(Kind):
    allowed = "a glob that matches at least one file"
    refused = ("/nonexistent-kubelab/*.json",)
    sample = "*"

    def convert(self, raw):
        files = sorted(f for f in glob.glob(str(raw)) if os.path.isfile(f))
        if not files:
            raise Refused("no file matches")
        return [Path(f) for f in files]


class Several(Kind):
    """An option given several times (invoke's iterable): each value of the `item` kind."""

    def __init__(self, item: Kind):
        self.item = item
        self.allowed = f"each {item.allowed}"
        self.refused = item.refused
        self.sample = item.sample

    def convert(self, raw):
        out = []
        for text in raw if isinstance(raw, (list, tuple)) else [raw]:
            try:
                out.append(self.item.convert(text))
            except Refused as exc:
                raise Refused(f"{text!r}: {exc}") from None
        return out


def writable_folder_problem(path: Path, create: bool = True) -> str:
    """Why this user cannot write into `path` (or, with `create`, make it), or ''. Tried, not
    read from mode bits (root passes every access() test, and /proc refuses root too):
    a scratch folder is made in `path`, or in the nearest folder that exists, and removed."""
    if path.exists() and not path.is_dir():
        return "not a folder"
    if not path.exists() and not create:
        return "no such folder"
    base = path
    while not base.exists() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        return f"{base} is not a folder"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".kubelab-write-test-", dir=base))
    except OSError as exc:
        how = "not writable" if base == path else f"cannot be made in {base}"
        return f"{how} ({exc.strerror or exc})"
    return ""


def checked(**kinds: Kind):
    """Check and convert a task's options before its body runs (a UsageError names the first
    bad option). Every parameter after the context must have a kind: an option nobody checks
    is how a bad value reaches the work."""

    def decorate(fn):
        sig = inspect.signature(fn)
        options = list(sig.parameters)[1:]
        missing = [o for o in options if o not in kinds]
        unknown = [k for k in kinds if k not in options]
        if missing or unknown:
            raise TypeError(f"{fn.__name__}: options without a kind {missing}, kinds without an option {unknown}")

        @functools.wraps(fn)
        def run(c, *args, **kwargs):
            bound = sig.bind(c, *args, **kwargs)
            bound.apply_defaults()
            for name, kind in kinds.items():
                bound.arguments[name] = kind.check(name, bound.arguments[name])
            return fn(*bound.args, **bound.kwargs)

        run.option_kinds = kinds
        return run

    return decorate


def option_kinds(body) -> dict[str, Kind] | None:
    """The kinds a task body declared with `checked`, or None if it declared none."""
    return getattr(body, "option_kinds", None)
