"""ansible-playbook's output, read line by line as it streams: the play and task running, each
host's outcome per task, each task's time, the failures with their host and message, and the
recap. Lines are those of ansible-core's `default` stdout callback, which kubespray's
ansible.cfg names (`stdout_callback = default`); formats as of ansible-core 2.18
(lib/ansible/plugins/callback/default.py, lib/ansible/utils/display.py):

    TASK [role : name] ****      banner: "%s [%s]" then stars (PLAY, TASK, RUNNING HANDLER, CLEANUP TASK)
    ok: [cp1]                    "ok: [%s]", "changed: [%s]", "skipping: [%s]"
    ok: [cp1] => (item=x)        a loop's item: "%s: [%s] => (item=%s)"
    failed: [cp1] (item=x) => {...}
    fatal: [cp1]: FAILED! => {...}       "fatal: [%s]: FAILED! => %s" (the result as JSON)
    fatal: [cp1]: UNREACHABLE! => {...}
    ...ignoring                  after a failure the task ignores
    cp1 : ok=3 changed=1 unreachable=0 failed=0 skipped=2 rescued=0 ignored=0   (the recap)

A host label may name a delegate (`cp1 -> localhost`); the host is what comes before ` -> `.
A result shown verbosely (an `assert`'s failure, `-v`) is indented JSON on the lines after
`=> {`; it is read to its closing brace.
Times are the host's clock at each banner, so they hold whatever callbacks are enabled.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from typing import Callable

BANNER = re.compile(r"^(PLAY|TASK|RUNNING HANDLER|CLEANUP TASK) \[(.*)\]( \[CHECK MODE\])? \*+$")
RECAP_BANNER = re.compile(r"^PLAY RECAP \*+$")
RESULT = re.compile(r"^(ok|changed|skipping|failed|fatal): \[([^\]]+)\]"
                    r"(?:: (FAILED|UNREACHABLE)!)?(?: \(item=.*?\))?(?: => (.*))?$")
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+"
                   r"skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)\s*$")
MAX_RESULT_LINES = 400  # an indented result longer than this is kept as read so far
RANK = {"skipping": 0, "ok": 1, "changed": 2, "ignored": 3, "failed": 4, "unreachable": 5}
RECAP_KEYS = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")


@dataclass
class Task:
    play: str
    name: str
    started: float
    seconds: float | None = None
    hosts: dict[str, str] = field(default_factory=dict)  # host -> ok | changed | skipping | failed | ...


@dataclass(frozen=True)
class Failure:
    task: str
    host: str
    kind: str          # FAILED or UNREACHABLE
    message: str       # the result's `msg` when it has one, else the whole result
    line: str          # verbatim
    ignored: bool = False


class PlayLog:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started = clock()
        self.play = ""
        self.tasks: list[Task] = []
        self.failures: list[Failure] = []
        self.recap: dict[str, dict[str, int]] = {}
        self._in_recap = False
        self._pending: tuple[int, list[str]] | None = None  # a failure whose JSON is still being printed

    # -- reading ----------------------------------------------------------------------------
    def feed(self, line: str) -> bool:
        """One line of output; True when what the live line shows changed."""
        line = line.rstrip("\n")
        if RECAP_BANNER.match(line):
            self._close()
            self._in_recap = True
            return True
        m = BANNER.match(line)
        if m:
            self._in_recap = False
            kind, name = m.group(1), m.group(2)
            self._close()
            if kind == "PLAY":
                self.play = name
            else:
                self.tasks.append(Task(self.play, name, self.clock()))
            return True
        if self._pending is not None:  # a result printed as indented JSON: read up to its end
            self._pending[1].append(line)
            payload = "\n".join(self._pending[1])
            if _parses(payload) or BANNER.match(line) or len(self._pending[1]) > MAX_RESULT_LINES:
                index, _ = self._pending
                f = self.failures[index]
                self.failures[index] = Failure(f.task, f.host, f.kind, _message(payload), f.line + "\n" + payload)
                self._pending = None
            return False
        if self._in_recap:
            r = RECAP.match(line)
            if r:
                self.recap[r.group(1)] = dict(zip(RECAP_KEYS, (int(x) for x in r.groups()[1:])))
            return False
        if line == "...ignoring" and self.failures:
            # once per host after its task's failures (a loop prints one failed line per item)
            last = self.failures[-1]
            self.failures = [replace(f, ignored=True) if (f.task, f.host) == (last.task, last.host) else f
                             for f in self.failures]
            if self.tasks:
                self.tasks[-1].hosts[last.host] = "ignored"
            return True
        r = RESULT.match(line)
        if not r or not self.tasks:
            return False
        status, label, bang, payload = r.groups()
        host = label.split(" -> ")[0]
        outcome = {"fatal": "unreachable" if bang == "UNREACHABLE" else "failed"}.get(status, status)
        task = self.tasks[-1]
        if RANK[outcome] >= RANK.get(task.hosts.get(host, "skipping"), 0):
            task.hosts[host] = outcome
        if status in ("fatal", "failed"):
            self.failures.append(Failure(task.name, host, bang or "FAILED", _message(payload), line))
            if payload is not None and payload.strip() == "{":  # verbose: the JSON follows on its own lines
                self._pending = (len(self.failures) - 1, ["{"])
        return True

    def _close(self) -> None:
        if self.tasks and self.tasks[-1].seconds is None:
            self.tasks[-1].seconds = round(self.clock() - self.tasks[-1].started, 3)

    def finish(self) -> None:
        self._close()

    # -- what it says -------------------------------------------------------------------------
    def counts(self) -> dict[str, dict[str, int]]:
        """Per host, how many tasks ended ok (changed ones included, as the recap counts them),
        changed, failed (ignored failures apart), so far."""
        out: dict[str, dict[str, int]] = {}
        for t in self.tasks:
            for host, outcome in t.hosts.items():
                c = out.setdefault(host, {"ok": 0, "changed": 0, "failed": 0})
                if outcome in ("ok", "changed", "ignored"):
                    c["ok"] += 1
                if outcome == "changed":
                    c["changed"] += 1
                elif outcome in ("failed", "unreachable"):
                    c["failed"] += 1
        return out

    def live(self) -> str:
        """One line for the console: the task, each host's counts, the time so far."""
        task = self.tasks[-1].name if self.tasks else "(starting)"
        hosts = "; ".join(f"{h} ok={c['ok']} changed={c['changed']} failed={c['failed']}"
                          for h, c in sorted(self.counts().items()))
        took = int(self.clock() - self.started)
        return f"{self.play or 'ansible'}: {task}" + (f" | {hosts}" if hosts else "") + f" | {took // 60}m{took % 60:02d}s"

    def slowest(self, n: int = 10) -> list[Task]:
        return sorted((t for t in self.tasks if t.seconds is not None), key=lambda t: -t.seconds)[:n]

    def summary(self) -> dict:
        """What the run record keeps beside the verbatim output."""
        seconds = round(self.clock() - self.started, 1)
        return {
            "tasks": len(self.tasks), "seconds": seconds,
            "tasks_per_minute": round(len(self.tasks) / (seconds / 60), 1) if seconds > 0 else None,
            "recap": self.recap, "counts": self.counts(),
            "slowest": [{"play": t.play, "task": t.name, "seconds": t.seconds} for t in self.slowest()],
            "failures": [{"task": f.task, "host": f.host, "kind": f.kind, "message": f.message,
                          "ignored": f.ignored, "line": f.line} for f in self.failures],
            # every task's outcome per host, in run order, which `ansible-task` reads (what a role
            # did on its own: a module loaded, a file written; or that it skipped it)
            "outcomes": [[t.name, dict(t.hosts)] for t in self.tasks],
        }


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _message(payload: str | None) -> str:
    """A failed result's `msg` (kubespray's censored line has `censored` instead) and, for a
    command, the last line of its stderr (`non-zero return code` alone says little); else the
    whole result."""
    if not payload:
        return ""
    try:
        result = json.loads(payload)
    except ValueError:
        return payload
    if not isinstance(result, dict):
        return payload
    said = str(result.get("msg") or result.get("censored") or "")
    stderr = str(result.get("stderr") or "").strip().splitlines()
    if stderr:
        said = f"{said}: {stderr[-1]}" if said else stderr[-1]
    return said or payload
