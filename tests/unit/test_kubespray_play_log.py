"""ansible-playbook's output read as it streams (harness/kubespray/play_log.py). The lines follow
ansible-core 2.18's default callback (lib/ansible/plugins/callback/default.py) and banner
(lib/ansible/utils/display.py); the two failures are kubespray-offline.md's, from real runs."""

from harness.kubespray.play_log import PlayLog

CENSORED = ('fatal: [node1]: FAILED! => {"attempts": 4, "censored": "the output has been hidden due to the fact '
            "that 'no_log: true' was specified for this result\", \"changed\": false}")
NOT_FOUND = ('fatal: [node1]: FAILED! => {"attempts": 4, "changed": false, "dest": "/tmp/releases/kubeadm-1.36.4-amd64", '
             '"elapsed": 0, "msg": "Request failed", "response": "HTTP Error 404: File not found", "status_code": 404, '
             '"url": "http://192.168.100.1:8080/dl.k8s.io/release/v1.36.4/bin/linux/amd64/kubeadm"}')

OUTPUT = f"""
PLAY [Prepare nodes for upgrade] ***********************************************

TASK [Gathering Facts] *********************************************************
Friday 04 December 2026  15:00:00 +0000 (0:00:00.050)       0:00:00.050 *******
ok: [node1]
ok: [node2]

TASK [kubernetes/preinstall : Set kernel parameters] ***************************
changed: [node1] => (item=net.ipv4.ip_forward)
ok: [node1] => (item=kernel.panic)
ok: [node2] => (item=net.ipv4.ip_forward)

TASK [container-engine/runc : Download_file | Download item] *******************
FAILED - RETRYING: [node1]: Download_file | Download item (4 retries left).
{CENSORED}
...ignoring
ok: [node2 -> localhost]

RUNNING HANDLER [kubernetes/preinstall : Preinstall | restart systemd-resolved] *
changed: [node2]

TASK [download : Download_file | Download item] ********************************
{NOT_FOUND}
fatal: [node2]: UNREACHABLE! => {{"changed": false, "msg": "Failed to connect to the host via ssh: Host key verification failed.", "unreachable": true}}

PLAY RECAP *********************************************************************
node1                      : ok=2    changed=1    unreachable=0    failed=1    skipped=144  rescued=0    ignored=1
node2                      : ok=3    changed=1    unreachable=1    failed=0    skipped=138  rescued=0    ignored=0
"""


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def read(output=OUTPUT, step=2.0):
    clock = Clock()
    play = PlayLog(clock)
    for line in output.splitlines():
        play.feed(line)
        clock.now += step
    play.finish()
    return play, clock


def test_each_task_with_its_play_its_hosts_outcome_and_its_time():
    play, _ = read()
    assert [(t.play, t.name, t.hosts) for t in play.tasks] == [
        ("Prepare nodes for upgrade", "Gathering Facts", {"node1": "ok", "node2": "ok"}),
        ("Prepare nodes for upgrade", "kubernetes/preinstall : Set kernel parameters", {"node1": "changed", "node2": "ok"}),
        ("Prepare nodes for upgrade", "container-engine/runc : Download_file | Download item",
         {"node1": "ignored", "node2": "ok"}),  # the delegate's label still names node2
        ("Prepare nodes for upgrade", "kubernetes/preinstall : Preinstall | restart systemd-resolved", {"node2": "changed"}),
        ("Prepare nodes for upgrade", "download : Download_file | Download item",
         {"node1": "failed", "node2": "unreachable"}),
    ]
    # a task's time runs from its banner to the next banner (2 s a line here)
    assert [t.seconds for t in play.tasks] == [10.0, 10.0, 12.0, 6.0, 8.0]
    assert [t.name for t in play.slowest(2)] == ["container-engine/runc : Download_file | Download item",
                                                 "Gathering Facts"]


def test_failures_carry_task_host_and_message_censored_or_not():
    play, _ = read()
    assert [(f.task, f.host, f.kind, f.ignored) for f in play.failures] == [
        ("container-engine/runc : Download_file | Download item", "node1", "FAILED", True),
        ("download : Download_file | Download item", "node1", "FAILED", False),
        ("download : Download_file | Download item", "node2", "UNREACHABLE", False)]
    censored, not_found, unreachable = play.failures
    assert censored.message.startswith("the output has been hidden") and censored.line == CENSORED
    assert not_found.message == "Request failed" and not_found.line == NOT_FOUND
    assert unreachable.message == "Failed to connect to the host via ssh: Host key verification failed."


def test_counts_the_live_line_and_the_recap():
    play, clock = read()
    # ok counts changed tasks too, as ansible's recap does
    assert play.counts() == {"node1": {"ok": 3, "changed": 1, "failed": 1},
                             "node2": {"ok": 4, "changed": 1, "failed": 1}}
    clock.now = 100.0 + 125
    assert play.live() == ("Prepare nodes for upgrade: download : Download_file | Download item | "
                           "node1 ok=3 changed=1 failed=1; node2 ok=4 changed=1 failed=1 | 2m05s")
    assert play.recap["node1"] == {"ok": 2, "changed": 1, "unreachable": 0, "failed": 1, "skipped": 144,
                                   "rescued": 0, "ignored": 1}
    summary = play.summary()
    assert summary["tasks"] == 5 and summary["slowest"][0]["seconds"] == 12.0
    assert [f["host"] for f in summary["failures"]] == ["node1", "node1", "node2"]


def test_only_banners_and_results_move_the_live_line():
    play = PlayLog(Clock())
    assert play.feed("PLAY [all] ****") and play.live().startswith("all: (starting)")
    assert not play.feed("Friday 04 December 2026  15:00:00 +0000 (0:00:00.050)       0:00:00.050 *******")
    assert not play.feed("ok: [node1]")  # a result before any task is not a task's
    assert play.feed("TASK [debug] ****") and play.feed("ok: [node1]")
    assert not play.feed('    "msg": "a multi-line result"')


def test_a_verbose_result_is_read_to_its_closing_brace():
    """An `assert` that fails prints its result as indented JSON (action/assert.py sets
    _ansible_verbose_always, ansible-core 2.18)."""
    play = PlayLog(Clock())
    for line in ["TASK [validate_inventory : Stop if even number of etcd hosts] ****",
                 "fatal: [cp1]: FAILED! => {",
                 '    "assertion": "groups.etcd | length is not divisibleby 2",',
                 '    "changed": false,',
                 '    "evaluated_to": false,',
                 '    "msg": "Assertion failed"',
                 "}",
                 "TASK [next] ****", "ok: [cp1]"]:
        play.feed(line)
    [f] = play.failures
    assert (f.task, f.host, f.message) == ("validate_inventory : Stop if even number of etcd hosts", "cp1",
                                           "Assertion failed")
    assert f.line.splitlines()[0] == "fatal: [cp1]: FAILED! => {" and f.line.endswith("}")
    assert [t.name for t in play.tasks][-1] == "next" and play.tasks[-1].hosts == {"cp1": "ok"}


def test_ignoring_after_a_loop_marks_every_item_of_that_host():
    play = PlayLog(Clock())
    for line in ["TASK [loop] ****",
                 'failed: [cp1] (item=a) => {"msg": "first"}',
                 'failed: [cp1] (item=b) => {"msg": "second"}',
                 'failed: [w1] (item=a) => {"msg": "w1 first"}',
                 "...ignoring"]:
        play.feed(line)
    assert [(f.host, f.ignored) for f in play.failures] == [("cp1", False), ("cp1", False), ("w1", True)]
