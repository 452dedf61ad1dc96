"""benchmarks/guest_cpu.py's reading of a guest's /proc: per-process CPU between two reads, with
pid reuse told apart by start time and what exited in the window kept as its own line."""

import pytest

from tests.unit import benchmark_module


def _bench():
    return benchmark_module.load("guest_cpu")


def _stat(pid: int, comm: str, utime: int, stime: int, start: int) -> str:
    # /proc/<pid>/stat: pid (comm) state ppid ... utime(14) stime(15) ... starttime(22) ...
    rest = ["S", "1"] + ["0"] * 9 + [str(utime), str(stime)] + ["0"] * 6 + [str(start)] + ["0"] * 10
    return f"{pid} ({comm}) " + " ".join(rest)


def _read(cpu: tuple[int, ...], procs: list[str]) -> str:
    return "\n".join(["cpu  " + " ".join(map(str, cpu)) + " 0 0 0", "100", *procs]) + "\n"


def test_per_process_cores_between_two_reads():
    bench = _bench()
    a = bench.parse(_read((100, 0, 50, 1000, 0, 0, 0), [
        _stat(10, "kube-apiserver", 40, 10, 5), _stat(11, "etcd", 20, 5, 6),
        _stat(12, "kworker/0:1-events", 1, 1, 7), _stat(13, "old (gone)", 5, 5, 8)]), at=0.0)
    # 10 s later: apiserver +300 ticks, etcd +100, a kworker of another CPU, pid 13 reused by a
    # new process (other start time), and 200 ticks no living process holds
    b = bench.parse(_read((600, 0, 250, 1500, 0, 10, 0), [
        _stat(10, "kube-apiserver", 290, 60, 5), _stat(11, "etcd", 100, 25, 6),
        _stat(12, "kworker/0:1-events", 1, 1, 7), _stat(14, "kworker/1:2", 10, 0, 9),
        _stat(13, "runc", 0, 10, 900)]), at=10.0)
    window, kinds, names = bench.difference(a, b)
    assert window == 10.0
    assert kinds == pytest.approx({"user": 0.5, "system": 0.2, "irq": 0.01})
    assert names["kube-apiserver"] == pytest.approx(0.30)
    assert names["etcd"] == pytest.approx(0.10)
    assert names["kworker"] == pytest.approx(0.01)   # both CPUs' kworkers, one name
    assert names["runc"] == pytest.approx(0.01)      # the reused pid counts from its own start
    assert "old (gone)" not in names
    assert names["exited in the window"] == pytest.approx(0.71 - 0.42)


def test_a_comm_with_spaces_and_parentheses_is_read_whole():
    bench = _bench()
    s = bench.parse(_read((1, 0, 1, 1, 0, 0, 0), [_stat(7, "a (b) c", 3, 4, 2)]), at=0.0)
    assert s.procs[(7, 2)] == ("a (b) c", 7)


def test_not_a_cpu_line_is_refused():
    with pytest.raises(ValueError, match="cpu line"):
        _bench().parse("intr 1 2\n100\n", at=0.0)
