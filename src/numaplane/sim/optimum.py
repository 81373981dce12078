"""The ``--optimum`` column: the CP-SAT bound of ``numaplane.sim.bound`` per configuration run.

Split from ``numaplane.sim.engine`` (which re-exports these names). A run's optimum is called
one only when the solver proved it; a time-limited search keeps its bound and its best
placement (``RunResult.with_optimum``).
"""

from __future__ import annotations

from collections.abc import Sequence

from numaplane.errors import InputError
from numaplane.node.devicemanager.inventory import sources_of
from numaplane.sim.configs import NamedConfig
from numaplane.sim.limits import MAX_OPTIMUM_CELLS
from numaplane.sim.results import Results
from numaplane.sim.trace import ARRIVE, Trace

__all__ = ["add_optimum", "check_optimum_size", "optimum_applies"]


def optimum_applies(trace: Trace) -> bool:
    """Whether the exact bound is defined for ``trace``: arrivals only, no lifetimes or health
    changes (the bound maximises admissions of one batch of pods)."""
    return all(e.type == ARRIVE and e.lifetime is None for e in trace.events)


def check_optimum_size(trace: Trace) -> None:
    """Refuse (``InputError`` naming ``--optimum``) a trace whose CP-SAT model would be too
    big to build: more than ``MAX_OPTIMUM_CELLS`` pod x node x NUMA node placement variables.
    """
    pods = sum(1 for e in trace.events if e.type == ARRIVE)
    numa = sum(len(s.machine.numa_ids or (0,)) * s.count for s in trace.nodes)
    if pods * numa > MAX_OPTIMUM_CELLS:
        raise InputError(
            "--optimum",
            f"{pods:,} pods on {numa:,} NUMA nodes make {pods * numa:,} placement variables, "
            f"over the limit of {MAX_OPTIMUM_CELLS:,}; use a smaller trace",
        )


def add_optimum(
    trace: Trace, configs: Sequence[NamedConfig], results: Results, *, time_limit_s: float = 30.0
) -> Results:
    """``results`` with every run's optimum (``numaplane.sim.bound``) filled in.

    Runs keep ``optimum: null`` when the bound does not apply (see ``optimum_applies``), and
    when the solver did not prove its answer within ``time_limit_s`` (then ``optimum_bound``
    and ``optimum_best`` say what is known). Raises ``InputError`` for a model over the size
    limit (``check_optimum_size``).
    """
    if not optimum_applies(trace):
        return results
    check_optimum_size(trace)
    from numaplane.sim import bound  # CP-SAT is heavy: import it only when asked

    machines = [spec.machine for spec in trace.nodes for _ in spec.node_names()]
    pods = [e.pod for e in trace.events if e.pod is not None]
    by_name = {c.name: c for c in configs}
    runs = []
    for run in results.runs:
        sources = [
            list(sources_of(spec.devices)) for spec in trace.nodes for _ in spec.node_names()
        ]
        best = bound.optimum(
            machines,
            by_name[run.config].config,
            pods,
            device_sources=sources,
            time_limit_s=time_limit_s,
        )
        # Only a proven optimum is called one: a time-limited search gives a bound and the
        # best placement it found, and both are kept.
        runs.append(
            run.with_optimum(
                proven=best.optimal,
                best=best.admitted if best.found else None,
                bound=best.upper_bound,
                note=best.note,
            )
        )
    return Results(results.trace, results.seed, results.nodes, tuple(runs))
