"""benchmarks/api_latency.py's pure parts: the guest's loop, its lines read back, the summary."""

import subprocess

from tests.unit import benchmark_module


def _bench():
    return benchmark_module.load("api_latency")


def test_the_loop_reads_the_kubelets_own_server_and_credentials_and_is_valid_shell():
    loop = _bench().guest_loop(3)
    assert "/etc/kubernetes/kubelet.conf" in loop and "seq 3" in loop
    assert "configmaps/kubeadm-config" in loop and "%{time_appconnect}" in loop
    assert subprocess.run(["sh", "-n", "-c", loop]).returncode == 0


def test_lines_are_read_into_requests_and_a_give_up_is_counted():
    bench = _bench()
    requests, failed = bench.parse("0.01 0.30 0.90 0.91 403\nfailed\n0.02 1.50 2.40 2.41 403\nnoise\n")
    assert failed == 1 and [r.total for r in requests] == [0.91, 2.41] and requests[1].tls == 1.5


def test_the_summary_gives_each_parts_median_p90_and_max_and_what_went_over_two_seconds():
    bench = _bench()
    requests, failed = bench.parse("".join(f"0.01 {t} {t + 0.1} {t + 0.1} 403\n" for t in (0.2, 0.4, 0.6, 2.5)))
    text = bench.summary(requests, failed + 1)
    assert "tls 0.50/2.50/2.50" in text and "over 2 s: 2 of 5" in text and "HTTP 403" in text
    assert bench.summary([], 3) == "no answer (3 failed)"
