"""benchmarks/kubespray.py's pure parts: the target line says which lab the target is for."""

from tests.unit.benchmark_module import load

bench = load("kubespray")


def run(result: str, *roles: str) -> dict:
    return {"verdict": {"result": result}, "machines": {f"m{i}": {"role": r} for i, r in enumerate(roles)}}


def test_a_one_plus_one_run_is_held_to_the_target():
    assert bench.target_line(run("met", "control-plane", "worker"), 50 * 60, 45) == \
        "target: kubespray 1+1 under 45 min here: not met (50.0 min)"
    assert bench.target_line(run("met", "control-plane", "worker"), 40 * 60, 45).endswith(": met (40.0 min)")


def test_a_run_that_was_not_met_gives_no_figure():
    assert "no figure: the run ended not met after 30.0 min" in \
        bench.target_line(run("not met", "control-plane", "worker"), 30 * 60, 45)


def test_a_one_machine_run_is_not_measured_against_the_one_plus_one_target():
    assert bench.target_line(run("met", "control-plane"), 30 * 60, 45) == \
        "target: none for this lab (1 machine(s), no worker); the 45 min target is a 1+1 lab's"
