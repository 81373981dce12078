"""``TopologyManager``: construction errors, scopes, allocation order, metrics, explanation."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from numaplane.api.pod import Container, Pod
from numaplane.node.errors import AdmissionError, ConfigurationError, NodeError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.manager import TopologyManager

TWO = [(0, [10, 11]), (1, [11, 10])]


@dataclass
class Recorder:
    """A provider that answers fixed hints and logs what it saw when allocating."""

    hints: ProviderHints
    store: TopologyManager | None = None
    fail_on: str | None = None
    error: NodeError = field(default_factory=lambda: NodeError("boom"))
    log: list[tuple[str, TopologyHint | None]] = field(default_factory=list)

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """Same answer for every container."""
        return self.hints

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """Same answer for the pod."""
        return self.hints

    def allocate(self, pod: Pod, container: Container) -> None:
        """Log the container and the affinity it reads; fail for ``fail_on``."""
        seen = None if self.store is None else self.store.get_affinity(pod.uid, container.name)
        self.log.append((container.name, seen))
        if container.name == self.fail_on:
            raise self.error


def _pod() -> Pod:
    return Pod.of(
        "uid",
        containers=[Container.of("app")],
        init_containers=[Container.of("init"), Container.of("sidecar", restart_policy="Always")],
    )


def _hints(*specs: tuple[tuple[int, ...], bool]) -> Mapping[str, list[TopologyHint]]:
    return {"cpu": [TopologyHint(BitMask(*bits), pref) for bits, pref in specs]}


@dataclass(frozen=True)
class NewCase:
    """Constructor arguments and the error substring (``None`` = succeeds)."""

    name: str
    topology: list[tuple[int, list[int] | None]] | None
    policy: str
    scope: str = "container"
    options: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None
    scope_name: str | None = None


NEW_CASES = (
    NewCase(
        "none policy ignores scope and options", None, "none", "bogus", {"x": "y"}, None, "none"
    ),
    NewCase("pod scope", None, "best-effort", "pod", scope_name="pod"),
    NewCase("unknown policy", None, "unknown", error='unknown policy: "unknown"'),
    NewCase("unknown scope", None, "best-effort", "unknown", error='unknown scope: "unknown"'),
    NewCase(
        "unknown option",
        None,
        "restricted",
        options={"unknown-option": "true"},
        error="unknown Topology Manager Policy option:",
    ),
    NewCase(
        "no distances with prefer-closest",
        [(0, None)],
        "best-effort",
        options={"prefer-closest-numa-nodes": "true"},
        error="cannot discover NUMA topology: error getting NUMA distances from cadvisor",
    ),
    NewCase(
        "nine nodes refused",
        [(i, None) for i in range(9)],
        "single-numa-node",
        error="unsupported on machines with more than 8 NUMA Nodes",
    ),
    NewCase(
        "nine nodes allowed by the option",
        [(i, None) for i in range(9)],
        "best-effort",
        options={"max-allowable-numa-nodes": "9"},
        scope_name="container",
    ),
    NewCase(
        "ten nodes above a raised limit",
        [(i, None) for i in range(10)],
        "best-effort",
        options={"max-allowable-numa-nodes": "9"},
        error="unsupported on machines with more than 9 NUMA Nodes",
    ),
    NewCase("nine nodes fine for none", [(i, None) for i in range(9)], "none", scope_name="none"),
)


@pytest.mark.parametrize("case", NEW_CASES, ids=lambda c: c.name)
def test_new_manager(case: NewCase) -> None:
    """Upstream NewManager's validation order and messages."""
    if case.error is not None:
        with pytest.raises(ConfigurationError) as info:
            TopologyManager(case.topology, case.policy, case.scope, case.options)
        assert case.error in str(info.value)
        return
    manager = TopologyManager(case.topology, case.policy, case.scope, case.options)
    assert manager.scope_name == case.scope_name


def test_container_scope_aligns_init_containers_first() -> None:
    """Each container merged, stored, then allocated by every provider in order."""
    manager = TopologyManager(TWO, "single-numa-node", "container")
    cpu = Recorder(_hints(((1,), True), ((0, 1), False)), manager)
    mem = Recorder(None, manager)
    manager.add_hint_provider(cpu, "cpu")
    manager.add_hint_provider(mem, "memory")
    result = manager.admit(_pod())
    assert result.admitted
    assert (result.reason, result.message) == (None, None)
    want = TopologyHint(BitMask(1), True)
    assert cpu.log == [("init", want), ("sidecar", want), ("app", want)]
    assert mem.log == cpu.log
    assert _aligned(manager, "container") == 3
    assert _value(manager, "kubelet_topology_manager_admission_requests_total") == 1
    assert _value(manager, "kubelet_topology_manager_admission_duration_ms_count") == 1


def test_container_scope_rejection_counts_and_keeps_earlier_state() -> None:
    """An allocation failure stops at that container; earlier hints stay (no rollback)."""
    manager = TopologyManager(TWO, "restricted", "container")
    cpu = Recorder(_hints(((0,), True)), manager, fail_on="sidecar")
    later = Recorder(None, manager)
    manager.add_hint_provider(cpu, "cpu")
    manager.add_hint_provider(later, "devices")
    result = manager.admit(_pod())
    assert not result.admitted
    assert result.reason == "UnexpectedAdmissionError"
    assert result.message == "Allocate failed due to boom, which is unexpected"
    assert later.log == [("init", TopologyHint(BitMask(0), True))]
    assert manager.get_affinity("uid", "init") == TopologyHint(BitMask(0), True)
    assert manager.get_affinity("uid", "sidecar") == TopologyHint(BitMask(0), True)
    assert _value(manager, "kubelet_topology_manager_admission_errors_total") == 1
    failed = result.explanation.decisions[-1]
    assert (failed.failed_provider, failed.error) == ("cpu", "boom")


def test_typed_allocation_error_keeps_its_reason() -> None:
    """An ``AdmissionError`` surfaces with its own reason and message."""
    manager = TopologyManager(TWO, "best-effort", "pod")
    err = AdmissionError("SMT Alignment Error: requested 1 cpus", "SMTAlignmentError")
    manager.add_hint_provider(Recorder(None, manager, fail_on="app", error=err), "cpu")
    result = manager.admit(_pod())
    assert (result.admitted, result.reason) == (False, "SMTAlignmentError")
    assert result.message == "SMT Alignment Error: requested 1 cpus"


def test_single_numa_node_rejection_counts_failure() -> None:
    """No single-node placement: TopologyAffinityError, failure counter, nothing allocated."""
    manager = TopologyManager(TWO, "single-numa-node", "container")
    cpu = Recorder(_hints(((0, 1), True)), manager)
    manager.add_hint_provider(cpu, "cpu")
    result = manager.admit(_pod())
    assert (result.reason, result.message) == (
        "TopologyAffinityError",
        "Resources cannot be allocated with Topology locality",
    )
    assert cpu.log == []
    assert _aligned(manager, "container", failure=True) == 1
    assert _value(manager, "kubelet_topology_manager_admission_errors_total") == 1


def test_pod_scope_stores_one_hint_and_allocates_after_each_store() -> None:
    """Same hint for every container; a container's hint is visible to its allocate."""
    manager = TopologyManager(TWO, "single-numa-node", "pod")
    cpu = Recorder(_hints(((0,), True), ((1,), True)), manager)
    manager.add_hint_provider(cpu, "cpu")
    result = manager.admit(_pod())
    want = TopologyHint(BitMask(0), True)
    assert cpu.log == [("init", want), ("sidecar", want), ("app", want)]
    assert _aligned(manager, "pod") == 1
    (decision,) = result.explanation.decisions
    assert decision.containers == ("init", "sidecar", "app")


def test_none_policy_allocates_without_storing() -> None:
    """No merge, no hint; every container allocated; the request is still counted."""
    manager = TopologyManager(TWO, "none")
    cpu = Recorder(_hints(((0,), True)), manager)
    manager.add_hint_provider(cpu, "cpu")
    assert manager.admit(_pod()).admitted
    assert [name for name, _ in cpu.log] == ["init", "sidecar", "app"]
    assert all(seen == TopologyHint(None, False) for _, seen in cpu.log)
    assert _value(manager, "kubelet_topology_manager_admission_requests_total") == 1


def test_explanation_keeps_the_empties_apart_and_renders() -> None:
    """JSON keeps ``null`` map, ``null`` list and ``[]``; the text names each provider."""
    manager = TopologyManager(TWO, "best-effort", "container")
    manager.add_hint_provider(Recorder(None), "cpu")
    manager.add_hint_provider(Recorder({"memory": None, "hugepages-1Gi": []}), "memory")
    manager.add_hint_provider(Recorder(_hints(((1,), True))), "devices")
    result = manager.admit(Pod.of("uid", containers=[Container.of("app")]))
    data = json.loads(json.dumps(result.to_json()))
    providers = data["explanation"]["decisions"][0]["providers"]
    assert providers[0] == {"provider": "cpu", "hints": None}
    assert providers[1]["hints"] == {"memory": None, "hugepages-1Gi": []}
    assert data["explanation"]["decisions"][0]["merged"] == {"numa": [1], "preferred": False}
    text = result.explanation.render_text()
    assert "hugepages-1Gi: no possible placement" in text
    assert "devices manager: cpu: {numa: 1, preferred: true}" in text


def test_clock_is_injected_for_duration() -> None:
    """The duration histogram gets milliseconds from the given clock."""
    ticks = iter([1.0, 1.25])
    manager = TopologyManager(TWO, "best-effort", clock=lambda: next(ticks))
    manager.admit(Pod.of("uid", containers=[Container.of("app")]))
    assert _value(manager, "kubelet_topology_manager_admission_duration_ms_sum") == 250.0


def test_remove_container_and_pod() -> None:
    """Stored hints go by container id or by pod."""
    manager = TopologyManager(TWO, "best-effort")
    manager.add_hint_provider(Recorder(_hints(((0,), True))), "cpu")
    pod = _pod()
    manager.admit(pod)
    manager.add_container(pod, "app", "cid")
    manager.remove_container("cid")
    assert manager.get_affinity("uid", "app") == TopologyHint(None, False)
    assert manager.get_affinity("uid", "init") == TopologyHint(BitMask(0), True)
    manager.remove_pod("uid")
    assert manager.state.snapshot() == {}


def _value(manager: TopologyManager, sample: str, labels: dict[str, str] | None = None) -> float:
    value = manager.metrics.registry.get_sample_value(sample, labels)
    assert value is not None, f"no sample {sample} {labels}"
    return value


def _aligned(manager: TopologyManager, scope: str, *, failure: bool = False) -> float:
    # prometheus_client names every counter sample "<name>_total".
    name = "kubelet_container_aligned_compute_resources_" + ("failure_" if failure else "")
    return _value(manager, name + "count_total", {"scope": scope, "boundary": "numa_node"})
