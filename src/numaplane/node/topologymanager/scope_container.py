"""Container scope: each container aligned on its own (upstream ``scope_container.go``).

Init containers first, then app containers (restartable init containers are not special). For
each: merge the providers' container hints; reject on a policy refusal; else store the hint and
call every provider's ``allocate``. Earlier containers' hints and allocations stay in place when
a later one fails, as upstream.
"""

from __future__ import annotations

from numaplane.api.pod import Pod
from numaplane.node.topologymanager.explain import Decision, merge_reason, provider_records
from numaplane.node.topologymanager.metrics import BOUNDARY_NUMA_NODE
from numaplane.node.topologymanager.metrics import SCOPE_CONTAINER as METRIC_SCOPE
from numaplane.node.topologymanager.policy import is_alignment_guaranteed
from numaplane.node.topologymanager.scope import SCOPE_CONTAINER, Scope, TopologyAdmission


class ContainerScope(Scope):
    """One merge per container."""

    name = SCOPE_CONTAINER

    def admit(self, pod: Pod) -> TopologyAdmission:
        """Align every container of the pod in turn."""
        decisions: list[Decision] = []
        guaranteed = is_alignment_guaranteed(self.policy)
        for container in pod.all_containers():
            answers = self._container_hints(pod, container)
            merged = self.policy.merge(answers)
            hint, admit, tie = merged.hint, merged.admit, merged.tie_break
            records = provider_records(self.provider_names, answers)
            why = merge_reason(self.policy.name, hint, admit)
            if not admit:
                decisions.append(
                    Decision(container.name, (), records, hint, False, why, tie_break=tie)
                )
                if guaranteed:
                    self.metrics.aligned.count_failure(METRIC_SCOPE, BOUNDARY_NUMA_NODE)
                self.metrics.admission_errors_total.inc()
                return self._affinity_rejected(decisions)
            self.store.set_affinity(pod.uid, container.name, hint)
            failure = self._allocate(pod, container)
            if failure is not None:
                decisions.append(
                    Decision(
                        container.name,
                        (container.name,),
                        records,
                        hint,
                        False,
                        "allocation failed",
                        failure.provider,
                        str(failure.error),
                        tie,
                    )
                )
                self.metrics.admission_errors_total.inc()
                return self._rejected(failure.error, decisions)
            decisions.append(
                Decision(container.name, (container.name,), records, hint, True, why, tie_break=tie)
            )
            if guaranteed:
                self.metrics.aligned.count(METRIC_SCOPE, BOUNDARY_NUMA_NODE)
        return self._admitted(decisions)
