"""What every Topology Manager scope shares (upstream ``scope.go``).

A scope owns the registered hint providers (in registration order), the policy and the affinity
store. ``admit`` returns a ``TopologyAdmission``: the kubelet's verdict (admitted, reason,
message) plus the explanation of every merge.
"""

from __future__ import annotations

from dataclasses import dataclass

from numaplane.api.pod import Container, Pod
from numaplane.errors import NumaplaneError
from numaplane.node.errors import TopologyAffinityError, admit_result_of
from numaplane.node.topologymanager.explain import Decision, Explanation
from numaplane.node.topologymanager.hint import ProviderHints, TopologyHint
from numaplane.node.topologymanager.metrics import TopologyManagerMetrics
from numaplane.node.topologymanager.policy import Policy
from numaplane.node.topologymanager.provider import HintProvider
from numaplane.node.topologymanager.store import AffinityStore

SCOPE_CONTAINER = "container"
SCOPE_POD = "pod"
SCOPE_NONE = "none"


@dataclass(frozen=True, slots=True)
class TopologyAdmission:
    """The Topology Manager's verdict on a pod and how it was reached."""

    admitted: bool
    reason: str | None
    message: str | None
    explanation: Explanation

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "admitted": self.admitted,
            "reason": self.reason,
            "message": self.message,
            "explanation": self.explanation.to_json(),
        }


@dataclass(frozen=True, slots=True)
class AllocationFailure:
    """The first provider whose ``allocate`` failed, and its error."""

    provider: str
    error: NumaplaneError


class Scope:
    """Providers, policy and store; subclasses implement ``admit``."""

    name: str = ""

    def __init__(
        self,
        policy: Policy,
        store: AffinityStore | None = None,
        metrics: TopologyManagerMetrics | None = None,
    ) -> None:
        self.policy = policy
        self.store = store if store is not None else AffinityStore()
        self.metrics = metrics if metrics is not None else TopologyManagerMetrics()
        self._providers: list[tuple[str, HintProvider]] = []
        self._names: tuple[str, ...] = ()  # every admission's explanation names them

    @property
    def provider_names(self) -> tuple[str, ...]:
        """Registered providers' names, in registration order."""
        return self._names

    @property
    def providers(self) -> tuple[HintProvider, ...]:
        """Registered providers, in registration order."""
        return tuple(provider for _, provider in self._providers)

    def add_hint_provider(self, provider: HintProvider, name: str) -> None:
        """Register a provider; it is consulted after those registered before it."""
        self._providers.append((name, provider))
        self._names = (*self._names, name)

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """The stored hint of a container (``AffinityReader``)."""
        return self.store.get_affinity(pod_uid, container_name)

    def admit(self, pod: Pod) -> TopologyAdmission:
        """Align (or reject) every container of the pod."""
        raise NotImplementedError

    # -- helpers for subclasses --------------------------------------------------------------

    def _container_hints(self, pod: Pod, container: Container) -> list[ProviderHints]:
        return [p.get_topology_hints(pod, container) for _, p in self._providers]

    def _pod_hints(self, pod: Pod) -> list[ProviderHints]:
        return [p.get_pod_topology_hints(pod) for _, p in self._providers]

    def _allocate(self, pod: Pod, container: Container) -> AllocationFailure | None:
        """Call every provider's ``allocate``; stop at the first failure (nothing rolled back)."""
        for name, provider in self._providers:
            try:
                provider.allocate(pod, container)
            except NumaplaneError as err:
                return AllocationFailure(name, err)
        return None

    def _explanation(self, decisions: list[Decision]) -> Explanation:
        return Explanation(self.policy.name, self.name, tuple(decisions))

    def _admitted(self, decisions: list[Decision]) -> TopologyAdmission:
        return TopologyAdmission(True, None, None, self._explanation(decisions))

    def _rejected(self, err: BaseException, decisions: list[Decision]) -> TopologyAdmission:
        reason, message = admit_result_of(err)
        return TopologyAdmission(False, reason, message, self._explanation(decisions))

    def _affinity_rejected(self, decisions: list[Decision]) -> TopologyAdmission:
        return self._rejected(TopologyAffinityError(), decisions)
