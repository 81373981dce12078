"""None scope: the ``none`` policy's admission (upstream ``scope_none.go``).

Nothing is merged and no hint is stored: every provider's ``allocate`` runs for each container
(init, then app) and the first error becomes the admission result.
"""

from __future__ import annotations

from numaplane.api.pod import Pod
from numaplane.node.topologymanager.explain import Decision
from numaplane.node.topologymanager.metrics import TopologyManagerMetrics
from numaplane.node.topologymanager.policy_none import NonePolicy
from numaplane.node.topologymanager.scope import SCOPE_NONE, Scope, TopologyAdmission
from numaplane.node.topologymanager.store import AffinityStore


class NoneScope(Scope):
    """Allocation without alignment."""

    name = SCOPE_NONE

    def __init__(
        self, store: AffinityStore | None = None, metrics: TopologyManagerMetrics | None = None
    ) -> None:
        super().__init__(NonePolicy(), store, metrics)

    def admit(self, pod: Pod) -> TopologyAdmission:
        """Allocate every container; the first failure rejects the pod."""
        decisions: list[Decision] = []
        why = "policy none admits without aligning"
        for container in pod.all_containers():
            failure = self._allocate(pod, container)
            if failure is not None:
                decisions.append(
                    Decision(
                        container.name,
                        (),
                        (),
                        None,
                        False,
                        "allocation failed",
                        failure.provider,
                        str(failure.error),
                    )
                )
                return self._rejected(failure.error, decisions)
            decisions.append(Decision(container.name, (), (), None, True, why))
        return self._admitted(decisions)
