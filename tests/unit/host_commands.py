"""The host's side of a scripted kubeadm run: under TCG the CNI's manifest is applied from the
host with the kit's kubectl (provisioners/kubeadm.py HostApply). Tests on scripted machines record
that command and answer it as done (Engine's `host_run`): nothing runs on the test host, which has
no such cluster."""

import time

from harness.remote.result import CommandResult


class HostCommands:
    """What each host step would run, recorded and answered as done."""

    def __init__(self):
        self.ran = []

    def __call__(self, cmd, timeout, on_line=None, clock=None):
        self.ran.append(cmd)
        return CommandResult("host", cmd.shown(), 0, "daemonset.apps/kube-flannel-ds created\n", "", time.time(), 0.1)
