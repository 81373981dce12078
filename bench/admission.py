"""Full-admission latency on one machine (issue 5).

    python3 bench/admission.py --machine 256ia64-64n2s2c [--repeat 300] [--seed 1]

Builds a node (static CPU and memory managers, best-effort Topology Manager in container scope,
``max-allowable-numa-nodes`` raised to the machine's NUMA count) with two device resources
spread over the NUMA nodes: one ``example.com/gpu`` per node and one ``example.com/nic`` per
pair of nodes (a device on both). It then admits a fixed, seeded stream of Guaranteed pods: ones
that fit one NUMA node, ones that need several, and ones that cannot fit; admitted pods are
released at random so the machine stays partly full. Every ``Node.admit`` is timed.

With 8 NUMA nodes or fewer the same stream is replayed through the exhaustive definition (the
cross product of fully listed hints, ``numaplane.testing.exhaustive``) and both runs must
decide identically. Prints one line:

    machine=<name> numa=<n> p50_ms=<x> p99_ms=<y> exhaustive_p50_ms=<z or skipped>

``--machine`` takes what ``numaplane admit --machine`` takes, or a fixture name from
``../shared/topologies``.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from numaplane.testing.admission_workload import pod_stream, resolve_machine, run
from numaplane.testing.exhaustive import use_exhaustive_merge

EXHAUSTIVE_LIMIT = 8


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its one-line result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--repeat", type=int, default=300, help="pods to admit")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--policy", default="best-effort")
    parser.add_argument("--scope", default="container")
    parser.add_argument(
        "--exhaustive-limit",
        type=int,
        default=EXHAUSTIVE_LIMIT,
        help="replay through the exhaustive definition up to this many NUMA nodes (0: never); "
        "at 8 nodes the listed cross products can take minutes for some streams",
    )
    args = parser.parse_args(argv)
    machine = resolve_machine(args.machine)
    steps = pod_stream(machine, args.repeat, args.seed)
    numa = len(machine.numa_nodes)
    times, decisions = run(machine, steps, args.policy, args.scope)
    exhaustive = "skipped"
    if numa <= args.exhaustive_limit:
        ref_times, ref_decisions = run(
            machine, steps, args.policy, args.scope, use_exhaustive_merge
        )
        if ref_decisions != decisions:
            print("error: fast path and exhaustive definition disagree", file=sys.stderr)
            return 1
        exhaustive = f"{statistics.median(ref_times):.3f}"
    print(
        f"machine={machine.name} numa={numa} p50_ms={statistics.median(times):.3f} "
        f"p99_ms={percentile(times, 0.99):.3f} exhaustive_p50_ms={exhaustive}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
