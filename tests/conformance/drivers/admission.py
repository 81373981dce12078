"""Driver for ``admission.json``: scope admission, ``NewManager`` errors, admit-result mapping.

``Manager.Admit`` vectors mirror upstream ``TestAdmit``: mock providers answer the same map for
container and pod hints and their ``allocate`` succeeds unless the vector gives an error for
them. The pod has ``init_containers`` + ``containers`` empty containers and the vector's QoS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from numaplane.api.pod import Container, Pod
from numaplane.node.errors import (
    AdmissionError,
    ConfigurationError,
    NodeError,
    TopologyAffinityError,
    admit_result_of,
)
from numaplane.node.topologymanager.hint import ProviderHints
from numaplane.node.topologymanager.manager import TopologyManager
from numaplane.node.topologymanager.scope import Scope
from numaplane.node.topologymanager.scope_container import ContainerScope
from numaplane.node.topologymanager.scope_pod import PodScope
from tests.conformance.drivers import VectorContext
from tests.conformance.drivers.merge_policies import policy_of, provider_hints_of


@dataclass
class MockProvider:
    """Answers fixed hints; ``allocate`` raises ``error`` if one is set."""

    hints: ProviderHints
    error: Exception | None = None
    allocated: list[str] = field(default_factory=list)

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        """The fixed hints."""
        return self.hints

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        """The fixed hints."""
        return self.hints

    def allocate(self, pod: Pod, container: Container) -> None:
        """Record the call; fail when told to."""
        self.allocated.append(container.name)
        if self.error is not None:
            raise self.error


def error_of(spec: Mapping[str, Any] | None) -> Exception | None:
    """The error a vector describes (``kind`` names its type, other keys its fields)."""
    if spec is None:
        return None
    kind = spec.get("kind", "plain")
    if kind == "plain":
        return NodeError(spec["message"])
    if kind == "TopologyAffinityError":
        return TopologyAffinityError()
    if kind == "SMTAlignmentError":
        requested, per_core = spec["RequestedCPUs"], spec["CpusPerCore"]
        if spec.get("CausedByPhysicalCPUs"):
            message = (
                "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                f"{spec['AvailablePhysicalCPUs']}, requested CPUs = {requested}, "
                f"CPUs per core = {per_core}"
            )
        else:
            message = (
                f"SMT Alignment Error: requested {requested} cpus not multiple cpus per core = "
                f"{per_core}"
            )
        return AdmissionError(message, "SMTAlignmentError")
    # "admission" or any other typed error: an error with Type() = its reason.
    reason = spec.get("type", spec.get("reason", kind))
    return AdmissionError(spec.get("message", ""), reason)


def _allocate_errors(inp: Mapping[str, Any], count: int) -> list[Exception | None]:
    specs = inp.get("allocate_errors")
    if specs is None:
        single = inp.get("allocate_error")
        specs = [single] * count if single is not None else [None] * count
    return [error_of(s) for s in specs]


def _pod(data: Mapping[str, Any]) -> Pod:
    inits = [Container.of(f"init-{i}") for i in range(data.get("init_containers", 0))]
    apps = [Container.of(f"container-{i}") for i in range(data.get("containers", 1))]
    return Pod.of("pod-uid", containers=apps, init_containers=inits, qos=data.get("qos"))


def _expect(name: str, got: tuple[bool, str | None, str | None], want: Mapping[str, Any]) -> None:
    admitted, reason, message = got
    assert admitted == want["admit"], f"{name}: admitted {admitted}, want {want['admit']}"
    for key, value in (("reason", reason), ("message", message)):
        if key in want:
            assert value == want[key], f"{name}: {key} {value!r}, want {want[key]!r}"


def _admit(inp: Mapping[str, Any], name: str, want: Mapping[str, Any]) -> None:
    answers = [provider_hints_of(p) for p in inp["providers_hints"]]
    errors = _allocate_errors(inp, len(answers))
    pod = _pod(inp["pod"])
    for scope_name in inp.get("scopes", ["container"]):
        # As upstream TestAdmit: the scope built directly around the policy.
        scope: Scope = (ContainerScope if scope_name == "container" else PodScope)(policy_of(inp))
        for i, (hints, error) in enumerate(zip(answers, errors, strict=True)):
            scope.add_hint_provider(MockProvider(hints, error), f"provider-{i}")
        result = scope.admit(pod)
        _expect(f"{name} [{scope_name}]", (result.admitted, result.reason, result.message), want)
        # And through the manager, which must agree (the none policy uses the none scope).
        numa = inp.get("numa_info") or {"nodes": [], "distances": {}}
        topology = [(n, numa["distances"].get(str(n))) for n in numa["nodes"]]
        manager = TopologyManager(topology, inp["policy"], scope_name, inp.get("policy_options"))
        for i, (hints, error) in enumerate(zip(answers, errors, strict=True)):
            manager.add_hint_provider(MockProvider(hints, error), f"provider-{i}")
        via = manager.admit(pod)
        _expect(f"{name} [manager {scope_name}]", (via.admitted, via.reason, via.message), want)


def _new_manager(inp: Mapping[str, Any], name: str, want: Mapping[str, Any]) -> None:
    ids = inp.get("topology_numa_ids")
    topology = None if ids is None else [(i, None) for i in ids]
    want_error = want.get("error_contains")
    built: TopologyManager | None = None
    error: str | None = None
    try:
        built = TopologyManager(
            topology, inp["policy"], inp.get("scope", "container"), inp.get("policy_options")
        )
    except ConfigurationError as err:
        error = str(err)
    if want_error is not None:
        assert error is not None, f"{name}: no error, want {want_error!r}"
        assert want_error in error, f"{name}: error {error!r}, want {want_error!r}"
        return
    assert built is not None, f"{name}: unexpected error {error}"
    manager = built
    if want.get("policy_name") is not None:
        assert manager.policy_name == want["policy_name"], f"{name}: {manager.policy_name}"
    if want.get("scope_name") is not None:
        assert manager.scope_name == want["scope_name"], f"{name}: {manager.scope_name}"


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one admission vector."""
    inp, want, name = vector["input"], vector["expected"], vector["name"]
    op = inp["op"]
    if op == "Manager.Admit":
        _admit(inp, name, want)
    elif op == "NewManager":
        _new_manager(inp, name, want)
    elif op == "GetPodAdmitResult":
        err = error_of(inp["error"])
        got = (True, None, None) if err is None else (False, *admit_result_of(err))
        _expect(name, got, want)
    else:
        raise AssertionError(f"unknown admission op {op!r}")
