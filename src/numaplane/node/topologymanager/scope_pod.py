"""Pod scope: one merge for the whole pod (upstream ``scope_pod.go``).

The providers' pod-level hints are merged once; on success the same hint is stored for every
container (init, then app) and each container's ``allocate`` runs right after its hint is
stored. Metrics follow the newest upstream revisions: the failure counter with ``scope="pod"``
when the policy guarantees alignment, and the success counter once per admitted pod.
"""

from __future__ import annotations

from numaplane.api.pod import Pod
from numaplane.node.topologymanager.explain import Decision, merge_reason, provider_records
from numaplane.node.topologymanager.metrics import BOUNDARY_NUMA_NODE
from numaplane.node.topologymanager.metrics import SCOPE_POD as METRIC_SCOPE
from numaplane.node.topologymanager.policy import is_alignment_guaranteed
from numaplane.node.topologymanager.scope import SCOPE_POD, Scope, TopologyAdmission


class PodScope(Scope):
    """One merge per pod."""

    name = SCOPE_POD

    def admit(self, pod: Pod) -> TopologyAdmission:
        """Align the pod as a whole."""
        guaranteed = is_alignment_guaranteed(self.policy)
        answers = self._pod_hints(pod)
        merged = self.policy.merge(answers)
        hint, admit, tie = merged.hint, merged.admit, merged.tie_break
        records = provider_records(self.provider_names, answers)
        why = merge_reason(self.policy.name, hint, admit)
        if not admit:
            if guaranteed:
                self.metrics.aligned.count_failure(METRIC_SCOPE, BOUNDARY_NUMA_NODE)
            self.metrics.admission_errors_total.inc()
            decision = Decision("pod", (), records, hint, False, why, tie_break=tie)
            return self._affinity_rejected([decision])
        stored: list[str] = []
        for container in pod.all_containers():
            self.store.set_affinity(pod.uid, container.name, hint)
            stored.append(container.name)
            failure = self._allocate(pod, container)
            if failure is not None:
                decision = Decision(
                    "pod",
                    tuple(stored),
                    records,
                    hint,
                    False,
                    f"allocation failed for container {container.name}",
                    failure.provider,
                    str(failure.error),
                    tie,
                )
                self.metrics.admission_errors_total.inc()
                return self._rejected(failure.error, [decision])
        if guaranteed:
            self.metrics.aligned.count(METRIC_SCOPE, BOUNDARY_NUMA_NODE)
        decision = Decision("pod", tuple(stored), records, hint, True, why, tie_break=tie)
        return self._admitted([decision])
