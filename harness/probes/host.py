"""Probes that read what the run's host steps recorded, not a machine or the API: a kubespray
failure is a failed Ansible task with a name, a host and a message (harness/kubespray/play_log.py),
and a scenario expects it the way a kubeadm scenario expects `kubeadm init`'s error."""

from __future__ import annotations

import re

from ..params import Param
from .base import Probe, Reading


class HostProbe(Probe):
    target = "host"

    def observe(self, plays, command: str) -> tuple[Reading, int | None]:
        """`plays`: the play summaries of the run's host steps so far (run.json's steps[].ansible)."""
        return self.read(plays), None


class AnsibleFailure(HostProbe):
    kind = "ansible-failure"
    UPSTREAM_TEXT = True
    ARGS = {"task": Param(str, required=False, help="a regex the failed task's name must match"),
            "host": Param(str, required=False, help="the inventory host that failed")}
    REGEX_ARGS = ("task",)

    def command(self, ctx=None) -> str:
        only = [f"task ~ {self.args['task']!r}" if self.args["task"] else "",
                f"host {self.args['host']}" if self.args["host"] else ""]
        return ("the failed tasks of the install's ansible-playbook, from its recorded output"
                + "".join(f"; {o}" for o in only if o))

    def read(self, plays) -> Reading:
        """value: how many tasks failed (ignored failures apart); text: each as
        `TASK [name] on host: message`, then its verbatim line, e.g.
        `fatal: [node1]: FAILED! => {"attempts": 4, "changed": false, ..., "msg": "Request failed", ...}`."""
        task, host = self.args["task"], self.args["host"]
        found = [f for p in plays for f in p.get("failures", []) if not f.get("ignored")
                 and (not task or re.search(task, f["task"])) and (not host or f["host"] == host)]
        text = "\n".join(f"TASK [{f['task']}] on {f['host']}: {f['message']}\n{f['line']}" for f in found)
        return Reading(len(found), text)


class AnsibleTask(HostProbe):
    kind = "ansible-task"
    ARGS = {"task": Param(str, help="a regex the task's name must match"),
            "host": Param(str, required=False, help="the inventory host")}
    REGEX_ARGS = ("task",)

    def command(self, ctx=None) -> str:
        return (f"the outcome of tasks ~ {self.args['task']!r} in the install's ansible-playbook, from its recorded output"
                + (f"; host {self.args['host']}" if self.args["host"] else ""))

    def read(self, plays) -> Reading:
        """value: the outcome on the last line (ok, changed, skipping, failed, ignored, unreachable);
        text: one line per matching task and host,
        `TASK [kubernetes/node : Enable br_netfilter module] on cp1: changed`, in run order.
        A task that never ran is value "" and no line."""
        task, host = self.args["task"], self.args["host"]
        found = [(name, h, outcome) for p in plays for name, hosts in p.get("outcomes", [])
                 if re.search(task, name) for h, outcome in hosts.items() if not host or h == host]
        text = "\n".join(f"TASK [{name}] on {h}: {outcome}" for name, h, outcome in found)
        return Reading(found[-1][2] if found else "", text)
