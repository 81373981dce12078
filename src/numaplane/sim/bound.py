"""The exact optimum: how many pods ANY placement could admit, solved with OR-Tools CP-SAT.

The simulator compares what the kubelet's greedy, arrival-order admission achieves with the
best any placement could do under the same rules. For an arrival-only trace (no departures)
that is a maximisation problem: choose the largest set of pods, and for each a node and NUMA
placement, such that every capacity and the alignment rule hold.

Model
-----

Capacities are read from the real node engine, so they match it exactly: for each node a
``numaplane.node.admission.Node(machine, config, device_sources=...)`` is built and

* exclusive CPUs per NUMA node = the node's online CPUs minus the CPU manager's reserved set
  (``cpu_manager.reserved_cpus()``); with ``full-pcpus-only`` every core holding a reserved
  thread is excluded whole, as the static policy does;
* memory and each hugepage size per NUMA node = the ``Static`` memory manager's allocatable in
  its machine state;
* devices = the device manager's healthy devices, pooled by their NUMA nodes (a device without
  locality is usable from every NUMA node);
* node allocatable (``Node.allocatable()``) bounds the sum of every admitted pod's effective
  requests, resource by resource, exactly where the kubelet's predicate admit handler checks.

A container's *aligned* demand is what the managers pin: its exclusive CPUs (static CPU
policy, Guaranteed pod, whole-CPU request), its ``memory``/``hugepages-*`` requests (``Static``
memory policy, Guaranteed pod without pod-level resources) and its device limits. Other
containers (Burstable, BestEffort, fractional CPUs) consume node allocatable only. A pod the
static policies would reject whatever the placement (an SMT-misaligned request under
``full-pcpus-only``, a memory request that is not whole bytes) is never admitted.

Init containers: a regular init container runs alone next to the sidecars started before it;
sidecars and app containers then run together. A pod's footprint on a NUMA node (or device
pool) is the peak over these phases of the phases' sums, i.e. the most the kubelet's reuse of
init-container resources could ever save. Real reuse is only as good (memory is only reused on
the same mask), so the bound stays an upper bound of the kubelet.

Alignment follows the Topology Manager policy:

* ``single-numa-node``: every container's aligned CPUs, memory and devices lie on one NUMA
  node; with ``topologyManagerScope: pod`` all of a pod's containers share that node;
* ``restricted``, ``best-effort`` and ``none``: any split across NUMA nodes. The optimum is
  then the pure capacity bound (per node: total exclusive CPUs, memory per resource, devices
  per resource). For ``restricted`` this is a relaxation: the kubelet also rejects placements
  that are not the providers' preferred (narrowest) masks, which the bound ignores.

CPU granularity is one logical CPU (one core under ``full-pcpus-only``, where requests are
whole cores). Options that only change *which* CPUs are picked (``distribute-cpus-across-*``,
``align-by-socket``, uncore-cache alignment) are not modelled: they cannot raise admissions
above the bound. With several nodes each pod goes to at most one of them. Quantities are
compared in millicores for CPU and in whole units (rounded up) for everything else.

The solver runs a fixed portfolio of ``workers`` strategies interleaved on one thread
(``interleave_search``) with a fixed seed, so equal inputs give equal answers. When the
time limit stops it, ``optimal`` is false, ``admitted`` is the best placement found and
``upper_bound`` the solver's proven bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from numaplane.api.kubeletconfig import KubeletConfiguration
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.devicemanager.source import DeviceSource
from numaplane.sim.bound_instance import (
    SPLIT,
    Instance,
    NodeCapacity,
    PodOnNode,
    build_instance,
    resolve_nodes,
)
from numaplane.topology.model import Machine

__all__ = ["OptimumResult", "optimum", "solve_instance"]

Placement = Mapping[str, Mapping[str, tuple[int, ...]]]
"""pod uid -> container name -> NUMA node ids its aligned resources use."""


@dataclass(frozen=True)
class OptimumResult:
    """The best admission count and one placement that reaches it.

    ``placement`` maps each admitted pod's uid to its containers' NUMA nodes; under a
    splitting policy (or for a container without aligned resources) that is every NUMA node of
    the pod's node, since the bound does not fix a split. ``node`` maps each admitted pod to the
    index of its node in the ``nodes`` given. ``upper_bound`` is the solver's proven bound
    (equal to ``admitted`` when ``optimal``); ``note`` says why a result is not optimal.
    ``found`` is false when the solver stopped before finding any placement (``admitted`` is
    then 0, which says nothing about the optimum).
    """

    admitted: int
    optimal: bool
    placement: Placement
    node: Mapping[str, int]
    upper_bound: int
    note: str = ""
    found: bool = True


def optimum(
    nodes: Machine | Sequence[Machine],
    config: KubeletConfiguration,
    pods: Sequence[Pod],
    *,
    device_sources: Sequence[Sequence[DeviceSource]] | None = None,
    time_limit_s: float = 30.0,
    workers: int = 8,
    seed: int = 0,
) -> OptimumResult:
    """The most pods of ``pods`` any placement on ``nodes`` admits under ``config``'s rules.

    ``device_sources`` gives each node's device plugins (one sequence per node, in order).
    Raises ``InputError`` for duplicate pod uids or a ``device_sources`` of the wrong length.
    """
    machines = resolve_nodes(nodes)
    instance = build_instance(machines, config, pods, device_sources)
    return solve_instance(instance, time_limit_s=time_limit_s, workers=workers, seed=seed)


def solve_instance(
    instance: Instance, *, time_limit_s: float = 30.0, workers: int = 8, seed: int = 0
) -> OptimumResult:
    """Solve a prepared instance with CP-SAT (see the module doc for the model)."""
    if not (math.isfinite(time_limit_s) and time_limit_s > 0):
        raise InputError(
            "optimum", f"time_limit_s must be a finite number above 0, got {time_limit_s}"
        )
    model = cp_model.CpModel()
    builder = _ModelBuilder(model, instance)
    builder.build()
    invalid = model.validate()
    if invalid:
        # CP-SAT works in 64-bit integers: capacities times pod counts past that are refused.
        raise InputError("--optimum", f"CP-SAT cannot take this model: {invalid.splitlines()[0]}")
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = max(1, workers)
    solver.parameters.random_seed = seed
    solver.parameters.log_search_progress = False
    # A portfolio of strategies run in turn on one thread: strong like parallel search, yet
    # reproducible, which truly parallel workers are not.
    solver.parameters.interleave_search = True
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        # Rejecting everything is always feasible, so only the time limit lands here.
        return OptimumResult(
            0,
            False,
            {},
            {},
            len(instance.pods),
            note="time limit reached before any placement was found",
            found=False,
        )
    return builder.result(solver, status == cp_model.OPTIMAL)


def _fits_at_all(
    demand: PodOnNode, allocatable: Mapping[str, int], totals: Mapping[str, int]
) -> bool:
    # A single amount above the node's whole capacity (allocatable, or an aligned resource
    # summed over every NUMA node and device pool) can never be placed on that node.
    if any(a > allocatable[r] for r, a in demand.node_requests.items() if r in allocatable):
        return False
    return all(a <= totals.get(r, 0) for r, a in demand.peak().items())


class _ModelBuilder:
    """Builds the CP-SAT model of one instance and reads a placement back."""

    def __init__(self, model: cp_model.CpModel, instance: Instance) -> None:
        self.model = model
        self.instance = instance
        # (pod index, node index) -> admitted on that node
        self.on: dict[tuple[int, int], cp_model.IntVar] = {}
        # (pod index, node index, group index, numa id) -> the group sits on that NUMA node
        self.at: dict[tuple[int, int, int, int], cp_model.IntVar] = {}
        # (pod index, node index) pairs that may be placed at all: admissible, and no amount
        # above what the whole node has. Only these enter the constraints, so an absurd
        # request (cpu: 1e18) cannot push a coefficient past CP-SAT's 64-bit range.
        totals = [(node.allocatable, node.totals()) for node in instance.nodes]
        self.usable = {
            (p, m)
            for p, pod in enumerate(instance.pods)
            for m in range(len(instance.nodes))
            if pod.demands[m].admissible and _fits_at_all(pod.demands[m], *totals[m])
        }

    def build(self) -> None:
        inst = self.instance
        for p in range(len(inst.pods)):
            for m in range(len(inst.nodes)):
                var = self.model.new_bool_var(f"on_{p}_{m}")
                self.on[p, m] = var
                if (p, m) not in self.usable:
                    self.model.add(var == 0)
            self.model.add_at_most_one(self.on[p, m] for m in range(len(inst.nodes)))
        for m, node in enumerate(inst.nodes):
            self._node_allocatable(m, node)
            if inst.alignment == SPLIT:
                self._split_capacity(m, node)
            else:
                self._aligned_capacity(m, node)
        self.model.maximize(sum(self.on.values()))

    def _node_allocatable(self, m: int, node: NodeCapacity) -> None:
        for resource, cap in sorted(node.allocatable.items()):
            terms = [
                (pod.demands[m].node_requests.get(resource, 0), self.on[p, m])
                for p, pod in enumerate(self.instance.pods)
                if (p, m) in self.usable
            ]
            terms = [(amount, var) for amount, var in terms if amount > 0]
            if terms:
                self.model.add(sum(a * v for a, v in terms) <= cap)

    def _split_capacity(self, m: int, node: NodeCapacity) -> None:
        totals = node.totals()
        pods = [(p, pod) for p, pod in enumerate(self.instance.pods) if (p, m) in self.usable]
        for resource in sorted({r for _, pod in pods for r in pod.demands[m].peak()}):
            terms = [(pod.demands[m].peak().get(resource, 0), self.on[p, m]) for p, pod in pods]
            terms = [(amount, var) for amount, var in terms if amount > 0]
            self.model.add(sum(a * v for a, v in terms) <= totals.get(resource, 0))

    def _aligned_capacity(self, m: int, node: NodeCapacity) -> None:
        # usage[(pool, resource)] collects each pod's footprint expression on that pool; a pool
        # is a NUMA node (CPUs, memory) or a device locality set.
        usage: dict[tuple[tuple[int, ...], str], list[cp_model.LinearExprT]] = {}
        for p, pod in enumerate(self.instance.pods):
            demand = pod.demands[m]
            if (p, m) not in self.usable:
                continue
            on = self.on[p, m]
            # phase -> (pool, resource) -> terms
            phase_terms: list[dict[tuple[tuple[int, ...], str], list[cp_model.LinearExprT]]] = [
                {} for _ in demand.phases
            ]
            for g, group in enumerate(demand.groups):
                at = {n: self.model.new_bool_var(f"at_{p}_{m}_{g}_{n}") for n in node.numa_ids}
                for n, var in at.items():
                    self.at[p, m, g, n] = var
                    if not demand.group_fits(g, node, n):
                        self.model.add(var == 0)
                self.model.add(sum(at.values()) == on)
                for c in group:
                    container = demand.containers[c]
                    per_pool = self._container_terms(p, m, c, container.aligned, node, at, on)
                    for ph, members in enumerate(demand.phases):
                        if c in members:
                            for key, terms in per_pool.items():
                                phase_terms[ph].setdefault(key, []).extend(terms)
            keys = sorted({k for terms in phase_terms for k in terms})
            for key in keys:
                exprs = [sum(terms.get(key, [])) for terms in phase_terms]
                if len(exprs) == 1:
                    usage.setdefault(key, []).append(exprs[0])
                    continue
                peak = self.model.new_int_var(0, node.pool_capacity(*key), f"peak_{p}_{m}_{key}")
                for expr in exprs:
                    self.model.add(peak >= expr)
                usage.setdefault(key, []).append(peak)
        for key, exprs in sorted(usage.items()):
            self.model.add(sum(exprs) <= node.pool_capacity(*key))

    def _container_terms(
        self,
        p: int,
        m: int,
        c: int,
        aligned: Mapping[str, int],
        node: NodeCapacity,
        at: Mapping[int, cp_model.IntVar],
        on: cp_model.IntVar,
    ) -> dict[tuple[tuple[int, ...], str], list[cp_model.LinearExprT]]:
        terms: dict[tuple[tuple[int, ...], str], list[cp_model.LinearExprT]] = {}
        for resource, amount in sorted(aligned.items()):
            pools = node.device_pools.get(resource)
            if pools is None:
                for n in node.numa_ids:
                    terms.setdefault(((n,), resource), []).append(amount * at[n])
                continue
            taken = []
            for locality, count in sorted(pools.items()):
                var = self.model.new_int_var(
                    0, min(amount, count), f"dev_{p}_{m}_{c}_{resource}_{locality}"
                )
                if locality:
                    # Only from a pool that touches the container's NUMA node.
                    self.model.add(var <= amount * sum(at[n] for n in locality))
                terms.setdefault((locality, resource), []).append(var)
                taken.append(var)
            self.model.add(sum(taken) == amount * on)
        return terms

    def result(self, solver: cp_model.CpSolver, optimal: bool) -> OptimumResult:
        inst = self.instance
        placement: dict[str, dict[str, tuple[int, ...]]] = {}
        where: dict[str, int] = {}
        for (p, m), var in sorted(self.on.items()):
            if not solver.boolean_value(var):
                continue
            pod = inst.pods[p]
            demand = pod.demands[m]
            where[pod.uid] = m
            every = inst.nodes[m].numa_ids
            chosen: dict[str, tuple[int, ...]] = {c.name: every for c in demand.containers}
            for g, group in enumerate(demand.groups):
                numa = tuple(
                    n
                    for n in every
                    if (p, m, g, n) in self.at and solver.boolean_value(self.at[p, m, g, n])
                )
                for c in group:
                    chosen[demand.containers[c].name] = numa
            placement[pod.uid] = chosen
        admitted = len(where)
        bound = min(len(inst.pods), int(solver.best_objective_bound + 1e-6))
        note = "" if optimal else "time limit reached before the best placement found was proven"
        return OptimumResult(admitted, optimal, placement, where, max(bound, admitted), note)
