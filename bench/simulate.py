"""Simulator throughput: replay a generated trace and print events and admissions per second.

    python bench/simulate.py                 # 50,000 arrivals + their 50,000 ends
    python bench/simulate.py --pods 5000 --config best-effort --profile

The trace is the ``telco`` mix (small Guaranteed pods with hugepages and a VF each, Poisson
arrivals, exponential lifetimes) on a 2-socket, 4-NUMA machine, built in memory so YAML parsing
is not timed. Each arrival runs the real kubelet admission (Topology, CPU, Memory and Device
Managers); each end releases the pod.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from numaplane.sim.configs import resolve_compare
from numaplane.sim.engine import run_config
from numaplane.sim.generate import Lifetime, generate
from numaplane.sim.trace import trace_from_dict
from numaplane.topology.discover import load_machine

MACHINE = (
    "sockets=2,numa-per-socket=2,cores-per-numa=8,threads-per-core=2,memory-per-numa=64Gi,"
    "hugepages-1Gi-per-numa=16"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=50_000, help="arrivals (events = 2x)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--config", default="single-numa-node")
    parser.add_argument("--profile", action="store_true", help="print the top cProfile entries")
    args = parser.parse_args()

    start = time.perf_counter()
    # ~40 pods alive on average (rate 1/s x mean lifetime 40s) on 60 exclusive CPUs.
    doc = generate(
        "telco",
        seed=args.seed,
        pods=args.pods,
        machine_spec=MACHINE,
        machine=load_machine(MACHINE),
        arrival_rate=1.0,
        lifetime=Lifetime.parse("exp:40"),
    )
    trace = trace_from_dict(doc, "bench")
    (config,) = resolve_compare((args.config,), trace.configs)
    built = time.perf_counter() - start
    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    result = run_config(trace, config)
    if profiler is not None:
        profiler.disable()
    elapsed = time.perf_counter() - start
    events = len(trace.events) + result.admitted  # arrivals + the ends of admitted pods
    decisions = result.admitted + result.rejected
    print(f"machine     {MACHINE}")
    print(f"config      {config.name}")
    print(f"trace       {len(trace.events)} arrivals, built in {built:.1f}s")
    print(f"replayed    {events} events in {elapsed:.2f}s")
    print(f"events/s    {events / elapsed:,.0f}")
    print(
        f"admissions  {decisions / elapsed:,.0f}/s ({result.admitted} admitted, "
        f"{result.rejected} rejected)"
    )
    if result.timing is not None:
        print(
            f"admit p50   {result.timing.admission_p50_ms:.3f} ms, "
            f"p99 {result.timing.admission_p99_ms:.3f} ms"
        )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
