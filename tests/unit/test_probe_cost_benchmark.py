"""benchmarks/probe_cost.py's pure parts: the guest's loop, its timings read back, the summary."""

import subprocess

from tests.unit import benchmark_module


def _bench():
    return benchmark_module.load("probe_cost")


def test_the_loop_times_each_kind_of_probe_in_the_running_calico_node_container_and_is_valid_shell():
    loop = _bench().guest_loop(3)
    assert "seq 3" in loop and "crictl ps --name '^calico-node$' --state running -q" in loop
    assert "exec $c /bin/calico-node -felix-live" in loop and "http://localhost:9099/liveness" in loop
    assert subprocess.run(["bash", "-n", "-c", loop]).returncode == 0


def test_the_shells_time_is_read_per_kind_and_summed_to_cpu_and_a_failed_command_only_counted():
    bench = _bench()
    # the loop's own line, run for real: bash's TIMEFORMAT='%R %U %S' and the command's exit status
    line = ("TIMEFORMAT='%R %U %S'; t=$(mktemp); s=0; { time sleep 0.2 >/dev/null 2>&1 || s=$?; } 2>$t; "
            "echo \"http $s $(cat $t)\"; s=0; { time false >/dev/null 2>&1 || s=$?; } 2>$t; echo \"exec $s $(cat $t)\"")
    out = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=True).stdout
    samples, failed = bench.parse(out + "noise\nexec 0 7.50 5.25 1.00\n")
    [(wall, cpu)] = samples["http"]
    assert 0.2 <= wall < 5 and cpu < wall
    assert samples["exec"] == [(7.5, 6.25)] and failed == {"exec": 1}


def test_the_summary_gives_each_kinds_median_wall_and_cpu_and_what_failed():
    text = _bench().summary({"exec": [(7.0, 6.0), (9.0, 8.0), (8.0, 7.0)], "http": [(0.02, 0.01)]}, {"exec": 2})
    assert text == "exec 8.00 s wall, 7.00 s CPU (n=3), 2 failed   runc -   http 0.02 s wall, 0.01 s CPU (n=1)"
