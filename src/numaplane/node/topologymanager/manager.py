"""``TopologyManager``: upstream ``NewManager`` plus ``Admit``.

Construction validates like the kubelet, in upstream order: the ``none`` policy short-circuits
to the none scope (options and scope are not looked at); otherwise the policy options are parsed
(feature gates apply), the NUMA info is built (with prefer-closest-numa-nodes every node needs
distances), machines with more NUMA nodes than ``max-allowable-numa-nodes`` are refused, and
unknown policy or scope names are errors. Every failure is a ``ConfigurationError`` carrying the
upstream message.

With ``prefer-most-allocated-numa-node`` the ``single-numa-node`` policy is wrapped in a
``UtilizationTieBreakingPolicy``; ``utilization`` (or ``set_utilization``) gives it the NUMA
utilization to read. Each merge returns the tie-break it applied, and the scope records it in
that merge's decision.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry

from numaplane.api.pod import Pod
from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.hint import TopologyHint
from numaplane.node.topologymanager.metrics import AlignedComputeResources, TopologyManagerMetrics
from numaplane.node.topologymanager.numa_info import NodeSpec, NUMAInfo, node_specs_of
from numaplane.node.topologymanager.numa_utilization import NUMAUtilization
from numaplane.node.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_RESTRICTED,
    POLICY_SINGLE_NUMA_NODE,
    Policy,
)
from numaplane.node.topologymanager.policy_best_effort import BestEffortPolicy
from numaplane.node.topologymanager.policy_options import (
    Gates,
    PolicyOptions,
    parse_policy_options,
)
from numaplane.node.topologymanager.policy_restricted import RestrictedPolicy
from numaplane.node.topologymanager.policy_single_numa_node import (
    SingleNumaNodePolicy,
    UtilizationTieBreakingPolicy,
)
from numaplane.node.topologymanager.provider import HintProvider
from numaplane.node.topologymanager.scope import (
    SCOPE_CONTAINER,
    SCOPE_POD,
    Scope,
    TopologyAdmission,
)
from numaplane.node.topologymanager.scope_container import ContainerScope
from numaplane.node.topologymanager.scope_none import NoneScope
from numaplane.node.topologymanager.scope_pod import PodScope
from numaplane.node.topologymanager.store import AffinityStateReader, AffinityStore
from numaplane.topology.model import Machine

Topology = Machine | Iterable[NodeSpec] | None
"""A machine, or cAdvisor-like ``(node id, distance row | None)`` pairs; ``None`` = no nodes."""


def build_policy(name: str, numa_info: NUMAInfo, options: PolicyOptions) -> Policy:
    """The policy called ``name``; ``ConfigurationError`` ``unknown policy: "<name>"`` else."""
    if name == POLICY_NONE:
        from numaplane.node.topologymanager.policy_none import NonePolicy

        return NonePolicy()
    if name == POLICY_BEST_EFFORT:
        return BestEffortPolicy(numa_info, options)
    if name == POLICY_RESTRICTED:
        return RestrictedPolicy(numa_info, options)
    if name == POLICY_SINGLE_NUMA_NODE:
        return SingleNumaNodePolicy(numa_info, options)
    raise ConfigurationError(f'unknown policy: "{name}"')


def build_scope(
    name: str, policy: Policy, store: AffinityStore, metrics: TopologyManagerMetrics
) -> Scope:
    """The scope called ``name``; ``ConfigurationError`` ``unknown scope: "<name>"`` else."""
    if name == SCOPE_CONTAINER:
        return ContainerScope(policy, store, metrics)
    if name == SCOPE_POD:
        return PodScope(policy, store, metrics)
    raise ConfigurationError(f'unknown scope: "{name}"')


class TopologyManager:
    """The kubelet's Topology Manager: merge providers' hints, store the affinity, allocate.

    ``registry`` receives the manager's metrics (a private one when not given; ``aligned``
    shares aligned-resources counters already created there). ``clock`` returns seconds
    (monotonic); it times admissions for the duration histogram. ``utilization`` feeds
    ``prefer-most-allocated-numa-node`` (ignored when the option is off).
    """

    def __init__(
        self,
        topology: Topology,
        policy: str,
        scope: str = SCOPE_CONTAINER,
        policy_options: Mapping[str, str] | None = None,
        feature_gates: Gates = None,
        *,
        registry: CollectorRegistry | None = None,
        aligned: AlignedComputeResources | None = None,
        clock: Callable[[], float] = time.monotonic,
        utilization: NUMAUtilization | None = None,
    ) -> None:
        self.metrics = TopologyManagerMetrics(registry, aligned)
        self._store = AffinityStore()
        self._clock = clock
        self._tie_breaking: UtilizationTieBreakingPolicy | None = None
        specs = node_specs_of(topology) if isinstance(topology, Machine) else topology
        if policy == POLICY_NONE:
            self.options = PolicyOptions()
            self.numa_info = NUMAInfo.new(specs, prefer_closest=False)
            self.scope: Scope = NoneScope(self._store, self.metrics)
            return
        self.options = parse_policy_options(policy_options, feature_gates)
        try:
            self.numa_info = NUMAInfo.new(specs, prefer_closest=self.options.prefer_closest_numa)
        except ConfigurationError as err:
            raise ConfigurationError(f"cannot discover NUMA topology: {err}") from err
        limit = self.options.max_allowable_numa_nodes
        if len(self.numa_info.nodes) > limit:
            raise ConfigurationError(f"unsupported on machines with more than {limit} NUMA Nodes")
        built = build_policy(policy, self.numa_info, self.options)
        self.options.validate_for_policy(built.name)
        if isinstance(built, SingleNumaNodePolicy) and self.options.prefer_most_allocated_numa_node:
            self._tie_breaking = UtilizationTieBreakingPolicy(built, utilization)
            built = self._tie_breaking
        self.scope = build_scope(scope, built, self._store, self.metrics)
        self.metrics.initialize()

    @property
    def policy(self) -> Policy:
        """The policy in force."""
        return self.scope.policy

    @property
    def policy_name(self) -> str:
        """The policy's name."""
        return self.scope.policy.name

    @property
    def state(self) -> AffinityStateReader:
        """Read access to the merged hints (the scopes alone write them)."""
        return self._store

    def restore_affinity(self, pod_uid: str, container_name: str, hint: TopologyHint) -> None:
        """Put back the merged hint of a container admitted before a restart (as the kubelet's
        re-admission of running pods leaves it)."""
        self._store.set_affinity(pod_uid, container_name, hint)

    @property
    def scope_name(self) -> str:
        """``container``, ``pod``, or ``none`` under the none policy."""
        return self.scope.name

    def set_utilization(self, utilization: NUMAUtilization | None) -> None:
        """The NUMA utilization prefer-most-allocated-numa-node reads (a no-op without it)."""
        if self._tie_breaking is not None:
            self._tie_breaking.utilization = utilization

    def add_hint_provider(self, provider: HintProvider, name: str) -> None:
        """Register a provider (the kubelet's Linux order: devices, cpu, memory, then DRA)."""
        self.scope.add_hint_provider(provider, name)

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint of a container (``AffinityReader``)."""
        return self._store.get_affinity(pod_uid, container_name)

    def add_container(self, pod: Pod, container_name: str, container_id: str) -> None:
        """Remember the runtime id of a container (upstream ``AddContainer``)."""
        self._store.add_container(pod.uid, container_name, container_id)

    def remove_container(self, container_id: str) -> None:
        """Forget a container's hint by runtime id, unless it was restarted under another id."""
        self._store.remove_container_id(container_id)

    def remove_pod(self, pod_uid: str) -> None:
        """Forget every hint of a pod."""
        self._store.remove_pod(pod_uid)

    def admit(self, pod: Pod) -> TopologyAdmission:
        """Upstream ``Admit``: count the request, run the scope, time it in milliseconds."""
        self.metrics.admission_requests_total.inc()
        start = self._clock()
        result = self.scope.admit(pod)
        self.metrics.admission_duration_ms.observe((self._clock() - start) * 1000.0)
        return result
