"""The replay engine: determinism, hand-computed measures, node selection, the KEP-6007 trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from numaplane.sim.configs import resolve_compare
from numaplane.sim.engine import simulate
from numaplane.sim.generate import dump_trace, generate
from numaplane.sim.measures import percentile, stranded
from numaplane.sim.trace import load_trace, parse_trace, trace_from_dict
from numaplane.topology.discover import load_machine

ROOT = Path(__file__).resolve().parents[2]
# Two NUMA nodes of 4 CPUs; the base config reserves CPU 0, so 3 + 4 CPUs are exclusive.
MACHINE = "sockets=2,cores-per-numa=4,memory-per-numa=8Gi"


def pod(name: str, cpu: str, memory: str = "1Gi", **extra: str) -> dict[str, Any]:
    limits = {"cpu": cpu, "memory": memory, **extra}
    return {
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
    }


def trace_doc(events: list[dict[str, Any]], count: int = 1, **node: Any) -> dict[str, Any]:
    return {
        "name": "tiny",
        "nodes": [{"name": "w", "machine": MACHINE, "count": count, **node}],
        "configs": ["single-numa-node", "best-effort"],
        "events": events,
    }


def run(doc: dict[str, Any], *compare: str, selection: str = "first-fit") -> Any:
    trace = trace_from_dict(doc)
    return simulate(trace, resolve_compare(compare, trace.configs), node_selection=selection)


def test_hand_computed_measures_single_numa_node() -> None:
    # 3 CPUs usable on NUMA 0, 4 on NUMA 1. A 3-CPU pod fills NUMA 0, a 4-CPU pod NUMA 1;
    # a 1-CPU pod finds 0 of 7 allocatable CPUs left (Unschedulable). Ending the 3-CPU pod at
    # t=2 frees NUMA 0 for a 2-CPU pod.
    events = [
        {"t": 0, "pod": pod("a", "3")},
        {"t": 1, "pod": pod("b", "4")},
        {"t": 1.5, "pod": pod("c", "1")},
        {"t": 2, "type": "end", "pod": "a"},
        {"t": 3, "pod": pod("d", "2")},
    ]
    result = run(trace_doc(events), "single-numa-node").runs[0]
    assert (result.admitted, result.rejected) == (3, 1)
    assert dict(result.rejected_by_reason) == {"Unschedulable": 1}
    points = [(p.t, p.admitted_pods, p.exclusive_cpus) for p in result.timeline]
    assert points == [(0.0, 1, 3), (1.0, 2, 7), (2.0, 1, 4), (3.0, 2, 6)]
    assert result.timeline[-1].memory_bytes == 2 << 30
    assert result.alignment == 1.0
    # The smallest request is 1 CPU: a free CPU is never stranded.
    assert result.stranded_cpus == 0
    # Utilization is taken at peak load, t=1 (7 exclusive CPUs): both NUMA nodes full. At the
    # end NUMA 0 would read 2/3, which is not what the heat map reports.
    use = result.numa_utilization
    assert use["w/0"].cpu == 1.0
    assert use["w/1"].cpu == 1.0


def test_topology_rejection_and_stranded_cpus() -> None:
    # 2-CPU pods: NUMA 0 takes one (1 CPU left), NUMA 1 two; the fourth finds 1 CPU free.
    events = [{"t": i, "pod": pod(f"p{i}", "2")} for i in range(4)]
    snn, be = run(trace_doc(events), "single-numa-node", "best-effort").runs
    assert snn.admitted == 3
    assert dict(snn.rejected_by_reason) == {"Unschedulable": 1}
    # The last free CPU (NUMA 0) can never hold a 2-CPU pod on one NUMA node.
    assert snn.stranded_cpus == 1
    assert be.stranded_cpus == 1
    assert snn.alignment == 1.0


def test_best_effort_spans_numa_nodes_and_counts_misalignment() -> None:
    events = [{"t": 0, "pod": pod("big", "6")}]
    snn, be = run(trace_doc(events), "single-numa-node", "best-effort").runs
    assert (snn.admitted, dict(snn.rejected_by_reason)) == (0, {"TopologyAffinityError": 1})
    assert be.admitted == 1
    assert be.alignment == 0.0


def test_lifetime_ends_free_resources() -> None:
    events = [
        {"t": 0, "pod": pod("a", "3"), "lifetime": 1},
        {"t": 1, "pod": pod("b", "3")},
    ]
    result = run(trace_doc(events), "single-numa-node").runs[0]
    assert result.admitted == 2
    # The state at t=1 equals the state at t=0 (one 3-CPU pod left, one came): one point.
    assert [(p.t, p.admitted_pods, p.exclusive_cpus) for p in result.timeline] == [(0.0, 1, 3)]


def test_device_health_event_makes_devices_unusable() -> None:
    devices = {"example.com/dev": [{"id": "d0", "numa": 0}, {"id": "d1", "numa": 1}]}
    events = [
        {
            "t": 0,
            "type": "device-health",
            "node": "w",
            "resource": "example.com/dev",
            "device": "d0",
        },
        {
            "t": 0,
            "type": "device-health",
            "node": "w",
            "resource": "example.com/dev",
            "device": "d1",
        },
        {"t": 1, "pod": pod("a", "1", **{"example.com/dev": "1"})},
    ]
    result = run(trace_doc(events, devices=devices), "single-numa-node").runs[0]
    assert result.admitted == 0
    assert dict(result.rejected_by_reason) == {"Unschedulable": 1}


def test_first_fit_versus_numa_aware() -> None:
    # Two nodes; both rules agree while the first fitting node's kubelet admits.
    events = [
        {"t": 0, "pod": pod("a", "1")},  # NUMA 0 of w-0: 2 left
        {"t": 1, "pod": pod("b", "2")},  # NUMA 0 of w-0: 0 left
        {"t": 2, "pod": pod("c", "1")},  # NUMA 1 of w-0: 3 left
        {"t": 3, "pod": pod("d", "4")},  # w-0 has 3 CPUs: scheduler skips to w-1 in both
        {"t": 4, "pod": pod("e", "3")},  # w-0: 3 free on NUMA 1: admitted
        {"t": 5, "pod": pod("f", "3")},  # w-0: 0 free -> w-1 (3 on NUMA 0, 0 on NUMA 1)
    ]
    first = run(trace_doc(events, count=2), "single-numa-node").runs[0]
    aware = run(trace_doc(events, count=2), "single-numa-node", selection="numa-aware").runs[0]
    assert first.admitted == 6
    assert aware.admitted == 6
    # Now a pod the first fitting node's kubelet rejects but the second admits.
    events2 = [
        {"t": 0, "pod": pod("a", "2")},  # w-0 NUMA 0: 1 left
        {"t": 1, "pod": pod("b", "2")},  # w-0 NUMA 1: 2 left (3 CPUs free on w-0)
        {"t": 2, "pod": pod("c", "3")},  # fits w-0 by count, no NUMA node has 3
    ]
    first = run(trace_doc(events2, count=2), "single-numa-node").runs[0]
    aware = run(trace_doc(events2, count=2), "single-numa-node", selection="numa-aware").runs[0]
    assert (first.admitted, dict(first.rejected_by_reason)) == (2, {"TopologyAffinityError": 1})
    assert (aware.admitted, aware.rejected) == (3, 0)


def test_unknown_node_selection_is_an_input_error() -> None:
    from numaplane.errors import InputError

    with pytest.raises(InputError, match="--node-selection"):
        run(trace_doc([]), "single-numa-node", selection="random")


def test_replay_is_deterministic() -> None:
    machine = "sockets=2,numa-per-socket=2,cores-per-numa=4,hugepages-1Gi-per-numa=4"
    doc = generate("telco", seed=3, pods=150, machine_spec=machine, machine=load_machine(machine))
    trace = parse_trace(dump_trace(doc), "t.yaml")
    configs = resolve_compare((), trace.configs)
    first = simulate(trace, configs).dumps(deterministic=True)
    second = simulate(trace, configs).dumps(deterministic=True)
    assert first == second
    assert '"timing": null' in first


def test_kep6007_prefer_most_allocated_admits_more() -> None:
    trace = load_trace(ROOT / "examples" / "traces" / "kep6007.yaml")
    plain, packed = simulate(trace, resolve_compare((), trace.configs)).runs
    assert plain.config == "single-numa-node"
    assert (plain.admitted, packed.admitted) == (3, 4)
    assert dict(plain.rejected_by_reason) == {"TopologyAffinityError": 2}


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([], 50) == 0.0


def test_stranded_rules() -> None:
    free = [{0: 1, 1: 3}]
    assert stranded(free, 2, aligned=True) == 1
    assert stranded(free, 2, aligned=False) == 0
    assert stranded(free, 5, aligned=False) == 4
    assert stranded(free, None, aligned=True) == 0
