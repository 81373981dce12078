"""Replay a trace through the real node engine, once per kubelet configuration.

Each node of the trace is a ``numaplane.node.admission.Node`` on in-memory state. Time is
virtual: events are taken in time order and nothing sleeps. At one instant, ends and device
health changes come before arrivals (a pod leaving at ``t`` frees room for one arriving at
``t``), and events of the same kind keep trace order; a lifetime's end is scheduled at
arrival + lifetime. A rejected pod is not retried (the kubelet fails it). An ``end`` for a pod
that is not running (rejected, or already ended) does nothing.

The same trace and configurations give the same results (only ``timing`` is wall-clock).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from numaplane.api.pod import Pod
from numaplane.errors import InputError, NumaplaneError
from numaplane.node.admission import Admission, Node
from numaplane.node.devicemanager.inventory import sources_of
from numaplane.sim import measures
from numaplane.sim.configs import NamedConfig
from numaplane.sim.nodeselect import NODE_SELECTION, UNSCHEDULABLE, Candidate
from numaplane.sim.optimum import add_optimum, check_optimum_size, optimum_applies
from numaplane.sim.results import NodeInfo, NumaUse, Results, RunResult, TimelinePoint, Timing
from numaplane.sim.trace import ARRIVE, END, HEALTH, NodeSpec, Trace

__all__ = [
    "MAX_TIMELINE_POINTS",
    "Progress",
    "add_optimum",
    "check_optimum_size",
    "node_infos",
    "optimum_applies",
    "run_config",
    "simulate",
]

MAX_TIMELINE_POINTS = 1000
"""Longer timelines are thinned to this many evenly spaced points (first and last kept)."""

Progress = Callable[[int], None]
"""Called with the number of events just processed (for a progress bar)."""

_Point = TypeVar("_Point")

_PHASE_FIRST = 0  # ends and device health changes
_PHASE_ARRIVE = 1


@dataclass
class _Held:
    """What an admitted pod holds, for the measures and for releasing it."""

    node: int
    requests: Mapping[str, int]
    cpus_per_numa: Mapping[int, int]
    exclusive_cpus: int
    memory_bytes: int


class _SimNode:
    """One node: the kubelet engine plus what the scheduler and the measures need."""

    def __init__(self, name: str, spec: NodeSpec, config: NamedConfig) -> None:
        self.name = name
        try:
            self.node = Node(spec.machine, config.config, device_sources=sources_of(spec.devices))
        except NumaplaneError as err:
            # Name where the configuration came from (a --compare value or the trace's
            # configs[i]): the engine's reason alone does not say which input to fix.
            where = config.origin or config.name
            raise InputError(where, f"{config.name!r} on node {name}: {err}") from None
        self.candidate = Candidate(name, _allocatable(self.node))
        self.cpu_numa = {cpu.id: cpu.numa for cpu in spec.machine.cpus}
        allocatable = self.node.cpu_manager.allocatable_cpus()
        self.free_per_numa: dict[int, int] = dict.fromkeys(spec.machine.numa_ids, 0)
        if self.node.cpu_manager.policy.name != "none":
            for cpu in allocatable:
                numa = self.cpu_numa[cpu]
                self.free_per_numa[numa] = self.free_per_numa.get(numa, 0) + 1
        self.device_numa = {
            resource: {d.id: d.numa_nodes for d in devices}
            for resource, devices in spec.devices.items()
        }

    def refresh_devices(self) -> None:
        """Device health changed: the scheduler sees the new allocatable."""
        self.candidate.allocatable = _allocatable(self.node)


def _allocatable(node: Node) -> dict[str, int]:
    return {
        name: amount.milli_value() if name == "cpu" else amount.value()
        for name, amount in node.allocatable().items()
    }


def _requests(pod: Pod) -> dict[str, int]:
    return {
        name: amount.milli_value() if name == "cpu" else amount.value()
        for name, amount in sorted(pod.effective_requests().items())
        if not amount.is_zero()
    }


def node_infos(trace: Trace) -> tuple[NodeInfo, ...]:
    """The nodes of ``trace`` as results list them."""
    return tuple(
        NodeInfo(name, spec.machine_spec, len(spec.machine.numa_ids), len(spec.machine.cpus))
        for spec in trace.nodes
        for name in spec.node_names()
    )


def simulate(
    trace: Trace,
    configs: Sequence[NamedConfig],
    *,
    node_selection: str = "first-fit",
    progress: Progress | None = None,
) -> Results:
    """Replay ``trace`` once per configuration; runs keep the order of ``configs``."""
    runs = tuple(
        run_config(trace, c, node_selection=node_selection, progress=progress) for c in configs
    )
    return Results(trace.name, trace.seed, node_infos(trace), runs)


def run_config(
    trace: Trace,
    config: NamedConfig,
    *,
    node_selection: str = "first-fit",
    progress: Progress | None = None,
) -> RunResult:
    """Replay ``trace`` under one kubelet configuration."""
    return _Run(trace, config, node_selection).run(progress)


class _Run:
    """The state of one replay."""

    def __init__(self, trace: Trace, config: NamedConfig, node_selection: str) -> None:
        if node_selection not in NODE_SELECTION:
            raise InputError(
                "--node-selection",
                f"unknown rule {node_selection!r} (expected {', '.join(NODE_SELECTION)})",
            )
        self.trace = trace
        self.config = config
        self.select = NODE_SELECTION[node_selection]
        self.nodes = [
            _SimNode(name, spec, config) for spec in trace.nodes for name in spec.node_names()
        ]
        self.by_name = {n.name: i for i, n in enumerate(self.nodes)}
        self.candidates = [n.candidate for n in self.nodes]
        self.running: dict[str, str] = {}  # pod key -> uid
        self.held: dict[str, _Held] = {}
        self.requests_of_template: dict[str, dict[str, int]] = {}
        self.rejected_by_reason: dict[str, int] = {}
        self.admitted = 0
        self.exclusive_cpus = 0
        self.memory_bytes = 0
        self.aligned = 0
        self.counted = 0
        self.admit_seconds: list[float] = []
        # ``(t, admitted pods, exclusive CPUs, memory bytes)``: points are built only for the
        # (thinned) timeline the result keeps.
        self.timeline: list[tuple[float, int, int, int]] = []
        arrivals = [e.pod for e in trace.events if e.type == ARRIVE and e.pod is not None]
        pod_scope = config.config.topology_manager_scope == "pod"
        static = config.config.cpu_manager_policy == "static"
        self.smallest = measures.smallest_cpu_request(arrivals, pod_scope) if static else None
        self.aligning = measures.is_aligning(config.config)
        self.stranded = 0
        # Per-NUMA utilization is reported at peak load: the end of a trace with lifetimes is
        # usually empty, which says nothing about how the policy packed the machine.
        self._peak: tuple[int, int] = (-1, -1)
        self._peak_utilization: dict[str, NumaUse] = {}

    def run(self, progress: Progress | None) -> RunResult:
        # Events are taken in (time, phase, sequence) order: the trace's own events sorted once,
        # merged with a heap of the lifetime ends scheduled on the way (a few per live pod), so
        # each step costs a look at two heads rather than a pop from a heap of every event.
        events = self.trace.events
        order = sorted(
            (event.t, _PHASE_ARRIVE if event.type == ARRIVE else _PHASE_FIRST, index, -1)
            for index, event in enumerate(events)
        )
        scheduled: list[tuple[float, int, int, int]] = []
        ends: list[str] = []  # scheduled lifetime ends, by pod key
        sequence = len(events)
        position = 0
        count = len(order)
        current: float | None = None
        while position < count or scheduled:
            if scheduled and (position == count or scheduled[0] < order[position]):
                t, _, seq, end_index = heapq.heappop(scheduled)
            else:
                t, _, seq, end_index = order[position]
                position += 1
            if current is not None and t != current:
                self._sample(current)
            current = t
            if end_index >= 0:
                self._end(ends[end_index])
            else:
                event = events[seq]
                if event.type == ARRIVE:
                    assert event.pod is not None
                    if self._arrive(event.pod, event.template) and event.lifetime is not None:
                        heapq.heappush(
                            scheduled, (t + event.lifetime, _PHASE_FIRST, sequence, len(ends))
                        )
                        ends.append(event.pod.key)
                        sequence += 1
                elif event.type == END:
                    assert event.pod_key is not None
                    self._end(event.pod_key)
                elif event.type == HEALTH:
                    self._health(event.node, event.resource, event.device, event.healthy)
            if progress is not None:
                progress(1)
        if current is not None:
            self._sample(current)
        self._measure_stranded()
        return self._result()

    # -- events ---------------------------------------------------------------------------

    def _admit(self, index: int, pod: Pod) -> Admission:
        start = time.perf_counter()
        try:
            return self.nodes[index].node.admit(pod)
        finally:
            self.admit_seconds.append(time.perf_counter() - start)

    def _arrive(self, pod: Pod, template: str | None) -> bool:
        if template is not None:
            requests = self.requests_of_template.get(template)
            if requests is None:
                requests = self.requests_of_template[template] = _requests(pod)
        else:
            requests = _requests(pod)
        mark = len(self.admit_seconds)
        index, admission = self.select(self.candidates, pod, requests, self._admit)
        if len(self.admit_seconds) - mark > 1:
            # One sample per pod decision, however many nodes were tried.
            total = sum(self.admit_seconds[mark:])
            del self.admit_seconds[mark:]
            self.admit_seconds.append(total)
        if index is None or admission is None or not admission.admitted:
            reason = UNSCHEDULABLE if admission is None else admission.reason or "Unknown"
            self.rejected_by_reason[reason] = self.rejected_by_reason.get(reason, 0) + 1
            self._measure_stranded()
            return False
        node = self.nodes[index]
        node.candidate.take(requests)
        cpus_per_numa: dict[int, int] = {}
        exclusive: set[int] = set()
        for c in admission.containers:
            exclusive.update(c.exclusive_cpus)
        for cpu in exclusive:
            numa = node.cpu_numa[cpu]
            cpus_per_numa[numa] = cpus_per_numa.get(numa, 0) + 1
            node.free_per_numa[numa] -= 1
        memory = requests.get("memory", 0)
        self.held[pod.uid] = _Held(index, requests, cpus_per_numa, len(exclusive), memory)
        self.running[pod.key] = pod.uid
        self.admitted += 1
        self.exclusive_cpus += len(exclusive)
        self.memory_bytes += memory
        aligned, counted = measures.container_alignment(admission, node.cpu_numa, node.device_numa)
        self.aligned += aligned
        self.counted += counted
        load = (self.exclusive_cpus, self.memory_bytes)
        if load > self._peak:
            self._peak = load
            self._peak_utilization = self._utilization()
        return True

    def _utilization(self) -> dict[str, NumaUse]:
        utilization: dict[str, NumaUse] = {}
        for node in self.nodes:
            utilization.update(measures.numa_utilization(node.name, node.node))
        return utilization

    def _end(self, key: str) -> None:
        uid = self.running.pop(key, None)
        if uid is None:
            return
        held = self.held.pop(uid)
        node = self.nodes[held.node]
        node.node.release(uid)
        node.candidate.give_back(held.requests)
        for numa, count in held.cpus_per_numa.items():
            node.free_per_numa[numa] += count
        self.exclusive_cpus -= held.exclusive_cpus
        self.memory_bytes -= held.memory_bytes

    def _health(
        self, node_name: str | None, resource: str | None, device: str | None, healthy: bool
    ) -> None:
        assert node_name is not None
        assert resource is not None
        assert device is not None
        node = self.nodes[self.by_name[node_name]]
        node.node.device_manager.set_device_health(resource, device, healthy)
        node.refresh_devices()

    # -- measures -------------------------------------------------------------------------

    def _sample(self, t: float) -> None:
        timeline = self.timeline
        pods, cpus, memory = len(self.running), self.exclusive_cpus, self.memory_bytes
        if timeline:
            _, last_pods, last_cpus, last_memory = timeline[-1]
            if last_pods == pods and last_cpus == cpus and last_memory == memory:
                return
        timeline.append((t, pods, cpus, memory))

    def _measure_stranded(self) -> None:
        if self.smallest is None:
            return
        value = measures.stranded(
            [n.free_per_numa for n in self.nodes], self.smallest, self.aligning
        )
        self.stranded = max(self.stranded, value)

    def _result(self) -> RunResult:
        utilization = self._peak_utilization or self._utilization()
        samples = sorted(self.admit_seconds)
        timing = Timing(
            measures.percentile(samples, 50) * 1000.0, measures.percentile(samples, 99) * 1000.0
        )
        return RunResult(
            config=self.config.name,
            admitted=self.admitted,
            rejected=sum(self.rejected_by_reason.values()),
            rejected_by_reason=dict(sorted(self.rejected_by_reason.items())),
            timeline=tuple(
                TimelinePoint(*point) for point in _thin(self.timeline, MAX_TIMELINE_POINTS)
            ),
            numa_utilization=utilization,
            stranded_cpus=self.stranded,
            alignment=self.aligned / self.counted if self.counted else 1.0,
            timing=timing,
        )


def _thin(points: Sequence[_Point], limit: int) -> tuple[_Point, ...]:
    if len(points) <= limit:
        return tuple(points)
    step = (len(points) - 1) / (limit - 1)
    return tuple(points[round(i * step)] for i in range(limit))
