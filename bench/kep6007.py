"""KEP-6007 on real machines: does ``prefer-most-allocated-numa-node`` admit more pods?

    python3 bench/kep6007.py [--seeds 20] [--pods 40] [--optimum]

The seed scenario of ``examples/traces/kep6007.yaml``, scaled to captured machines: one node of
each machine, a GPU on its last NUMA node, a device-bound pod holding half of that NUMA node's
CPUs, then a seeded stream of single-NUMA Guaranteed pods mixing small ones (a quarter of a NUMA
node's CPUs) and large ones (three quarters), which never leave. Each stream is replayed under
``single-numa-node`` with and without the option (static CPU and Static memory managers, the
simulator's base configuration). Prints, per machine and configuration, summed over the seeds:
admitted pods, admitted large pods, and exclusive CPUs in use at the end (the streams only
arrive, so that is the peak), and how many seeds each configuration won on admitted pods.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from typing import Any

from numaplane.sim.configs import resolve_compare
from numaplane.sim.engine import add_optimum, simulate
from numaplane.sim.results import TimelinePoint
from numaplane.sim.trace import trace_from_dict
from numaplane.testing.admission_workload import resolve_machine
from numaplane.topology.model import Machine

MACHINES = ("96em64t-4n4d3ca2co-pci", "16amd64-8n2c", "64amd64-4s2n4ca2co")
CONFIGS = ("single-numa-node", "single-numa-node+prefer-most-allocated-numa-node")


def _pod(name: str, cpus: int, gpu: bool = False) -> dict[str, Any]:
    limits: dict[str, Any] = {"cpu": str(cpus), "memory": "256Mi"}
    if gpu:
        limits["nvidia.com/gpu"] = "1"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]},
    }


def trace_for(spec: str, machine: Machine, seed: int, pods: int) -> dict[str, Any]:
    """The scaled seed scenario on one machine."""
    per_numa = min(len(n.cpus) for n in machine.numa_nodes if n.cpus)
    last = machine.numa_nodes[-1].id
    rng = random.Random(seed)
    small, large = max(1, per_numa // 4), max(2, (3 * per_numa) // 4)
    events = [{"t": 0, "pod": _pod("gpu", max(1, per_numa // 2), gpu=True)}]
    for i in range(pods):
        events.append({"t": i + 1, "pod": _pod(f"p{i}", rng.choice((small, small, large)))})
    return {
        "name": f"kep6007-{spec}-seed{seed}",
        "nodes": [
            {
                "name": "worker",
                "machine": str(machine.source or spec),
                "devices": {"nvidia.com/gpu": [{"id": "gpu0", "numa": last}]},
            }
        ],
        "configs": list(CONFIGS),
        "events": events,
    }


def _large_admitted(timeline: Sequence[TimelinePoint], machine: Machine) -> int:
    # Each admission adds one timeline point; a step of the large size is a large pod.
    per_numa = min(len(n.cpus) for n in machine.numa_nodes if n.cpus)
    size = max(2, (3 * per_numa) // 4)
    used = [p.exclusive_cpus for p in timeline]
    return sum(1 for before, after in zip([0, *used], used, strict=False) if after - before == size)


def main() -> None:
    """Run the comparison and print one line per machine."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--pods", type=int, default=40)
    parser.add_argument("--optimum", action="store_true", help="also solve the exact optimum")
    parser.add_argument("machines", nargs="*", default=list(MACHINES))
    args = parser.parse_args()
    for spec in args.machines:
        machine = resolve_machine(spec)
        totals = dict.fromkeys(CONFIGS, 0)
        cpus = dict.fromkeys(CONFIGS, 0)
        large = dict.fromkeys(CONFIGS, 0)
        optimum_total = 0
        wins = dict.fromkeys((*CONFIGS, "tie"), 0)
        for seed in range(args.seeds):
            trace = trace_from_dict(trace_for(spec, machine, seed, args.pods))
            configs = resolve_compare([], trace.configs)
            results = simulate(trace, configs)
            if args.optimum:
                results = add_optimum(trace, configs, results, time_limit_s=20.0)
                optimum_total += results.runs[0].optimum or 0
            admitted = [run.admitted for run in results.runs]
            for name, run in zip(CONFIGS, results.runs, strict=True):
                totals[name] += run.admitted
                cpus[name] += max((p.exclusive_cpus for p in run.timeline), default=0)
                large[name] += _large_admitted(run.timeline, machine)
            if admitted[0] == admitted[1]:
                wins["tie"] += 1
            else:
                wins[CONFIGS[admitted.index(max(admitted))]] += 1
        numa = len(machine.numa_nodes)
        line = (
            f"machine={spec} numa={numa} seeds={args.seeds} pods={args.pods} "
            f"admitted_default={totals[CONFIGS[0]]} admitted_most_allocated={totals[CONFIGS[1]]} "
            f"large_default={large[CONFIGS[0]]} large_most_allocated={large[CONFIGS[1]]} "
            f"cpus_default={cpus[CONFIGS[0]]} cpus_most_allocated={cpus[CONFIGS[1]]} "
            f"wins_default={wins[CONFIGS[0]]} wins_most_allocated={wins[CONFIGS[1]]} "
            f"ties={wins['tie']}"
        )
        if args.optimum:
            line += f" optimum={optimum_total}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
