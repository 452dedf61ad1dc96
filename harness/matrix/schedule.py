"""Admission: which cells may run side by side on one host.

A cell needs what its largest scenario declares (its scenarios run one after
another): the guests' memory plus QEMU's overhead per machine, and their
vCPUs. Cells are admitted in order while the sums stay within the host's
memory budget and the vCPU cap. Budgets are declared capacities (MemTotal less
a reserve), never measured free memory: a cell once admitted is never killed
to make room.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import lifecycle

HOST_RESERVE_MIB = 2048  # the host's own processes, the registry, the harness


@dataclass(frozen=True)
class Need:
    memory_mib: int
    vcpus: int


def scenario_need(scenario) -> Need:
    kubernetes = scenario.install.kubernetes if scenario.install.installs_kubernetes else None
    overhead = lifecycle.overhead_mib(kubernetes)
    machines = scenario.lab.machines
    return Need(sum(m.memory + overhead for m in machines), sum(m.cpus for m in machines))


def cell_need(cell, scenarios: dict) -> Need:
    needs = [scenario_need(scenarios[n]) for n in cell.scenarios]
    return Need(max(n.memory_mib for n in needs), max(n.vcpus for n in needs))


def budget(mem_total_mib: int) -> int:
    return max(0, mem_total_mib - HOST_RESERVE_MIB)


def admit(running: list[Need], candidate: Need, memory_budget_mib: int, max_vcpus: int) -> bool:
    """May `candidate` start next to `running`? A lone cell is always admitted if it fits at all."""
    if not running:
        return True
    mem = sum(n.memory_mib for n in running) + candidate.memory_mib
    cpus = sum(n.vcpus for n in running) + candidate.vcpus
    return mem <= memory_budget_mib and cpus <= max_vcpus


def waves(needs: list[Need], memory_budget_mib: int, max_vcpus: int) -> list[list[int]]:
    """The order cells would start in if each took equally long: groups of indexes that
    run side by side (for the plan and its time estimate; the runner admits live)."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i, need in enumerate(needs):
        if admit([needs[j] for j in current], need, memory_budget_mib, max_vcpus):
            current.append(i)
        else:
            groups.append(current)
            current = [i]
    if current:
        groups.append(current)
    return groups


def too_big(need: Need, memory_budget_mib: int) -> bool:
    return need.memory_mib > memory_budget_mib
