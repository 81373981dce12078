"""The live tree's nodes: Cohorts and ClusterQueues as the cache keeps them between events, and
the tree walks upstream's hierarchy manager and ``updateCohortResourceNode`` do."""

from __future__ import annotations

from collections.abc import Iterator

from numaplane.kueue.api.model import ClusterQueue, Cohort, Workload
from numaplane.kueue.cache import resource_node as rn
from numaplane.kueue.cache import status as st
from numaplane.kueue.resources import FlavorResource


class LiveCohort:
    """A Cohort of the live tree; ``spec`` None while only referenced (implicit)."""

    __slots__ = ("child_cohorts", "child_cqs", "name", "node", "parent", "spec")

    def __init__(self, name: str) -> None:
        self.name = name
        self.spec: Cohort | None = None
        self.node = rn.ResourceNode()
        self.parent: LiveCohort | None = None
        self.child_cqs: dict[str, LiveClusterQueue] = {}
        self.child_cohorts: dict[str, LiveCohort] = {}


class LiveClusterQueue:
    """A ClusterQueue of the live tree with its reserving workloads and status counters."""

    __slots__ = (
        "admitted_count",
        "admitted_usage",
        "check_flavors",
        "generation",
        "health",
        "local_queues",
        "node",
        "parent",
        "spec",
        "workloads",
    )

    def __init__(self, spec: ClusterQueue) -> None:
        self.spec = spec
        self.node = rn.ResourceNode()
        self.parent: LiveCohort | None = None
        self.workloads: dict[str, Workload] = {}
        self.admitted_usage: dict[FlavorResource, int] = {}
        self.admitted_count = 0
        #: ``namespace/queueName`` → usage of the workloads reserving here through it.
        self.local_queues: dict[str, st.UsageCounter] = {}
        self.health = st.QueueHealth()
        self.generation = 0
        self.check_flavors: dict[str, frozenset[str]] = {}

    def charge(self, wl: Workload) -> None:
        """Count ``wl`` (which has an admission) here: usage up the tree, status counters."""
        assert wl.admission is not None
        usage = wl.admission.usage()
        if self.parent is not None and has_cycle(self.parent):
            # A Cohort cycle has no root to charge; the tree is recomputed from the queues'
            # usage once the cycle is broken.
            for fr, value in usage.items():
                self.node.usage[fr] = self.node.usage.get(fr, 0) + value
        else:
            for fr, value in usage.items():
                rn.add_usage(self, fr, value)
        admitted = wl.is_admitted
        if admitted:
            for fr, value in usage.items():
                self.admitted_usage[fr] = self.admitted_usage.get(fr, 0) + value
            self.admitted_count += 1
        lq_key = f"{wl.namespace}/{wl.queue_name}"
        counter = self.local_queues.get(lq_key)
        if counter is None:
            counter = self.local_queues[lq_key] = st.UsageCounter()
        counter.change(usage, admitted=admitted, sign=1)
        self.workloads[wl.key] = wl

    def discharge(self, key: str) -> None:
        """Stop counting workload ``key`` here."""
        wl = self.workloads.pop(key, None)
        if wl is None or wl.admission is None:
            return
        usage = wl.admission.usage()
        if self.parent is not None and has_cycle(self.parent):
            for fr, value in usage.items():
                self.node.usage[fr] = self.node.usage.get(fr, 0) - value
        else:
            for fr, value in usage.items():
                rn.remove_usage(self, fr, value)
        admitted = wl.is_admitted
        if admitted:
            for fr, value in usage.items():
                self.admitted_usage[fr] = self.admitted_usage.get(fr, 0) - value
            self.admitted_count -= 1
        lq_key = f"{wl.namespace}/{wl.queue_name}"
        counter = self.local_queues.get(lq_key)
        if counter is not None:
            counter.change(usage, admitted=admitted, sign=-1)
            if counter.empty:
                del self.local_queues[lq_key]
        # Whatever leaves a queue may let a workload that did not fit before fit now.
        self.generation += 1


def has_cycle(cohort: LiveCohort | None) -> bool:
    """Whether walking up from ``cohort`` meets a Cohort twice (upstream ``HasCycle``)."""
    seen: set[str] = set()
    current = cohort
    while current is not None and current.parent is not None:
        if current.name in seen:
            return True
        seen.add(current.name)
        current = current.parent
    return False


def root(cohort: LiveCohort) -> LiveCohort:
    """The root above ``cohort`` (callers have ruled out cycles)."""
    while cohort.parent is not None:
        cohort = cohort.parent
    return cohort


def recompute(cohort: LiveCohort) -> None:
    """Subtree quota and usage of ``cohort`` and everything below, from the leaves (upstream
    ``updateCohortResourceNode``)."""
    node = cohort.node
    node.subtree_quota = rn.nominal_subtree(node.quotas)
    node.usage = {}
    for child in cohort.child_cohorts.values():
        recompute(child)
        rn.accumulate_from_child(node, child.node)
    for cq in cohort.child_cqs.values():
        cq.node.subtree_quota = rn.nominal_subtree(cq.node.quotas)
        # As upstream's updateClusterQueueResourceNode: any change of the tree may let a
        # workload fit that did not before, in every queue of it.
        cq.generation += 1
        rn.accumulate_from_child(node, cq.node)


def recompute_tree(cohort: LiveCohort | None) -> None:
    """Recompute the whole tree ``cohort`` belongs to, unless its ancestry has a cycle."""
    if cohort is not None and not has_cycle(cohort):
        recompute(root(cohort))


def subtree_cqs(cohort: LiveCohort, seen: set[str]) -> Iterator[str]:
    """Names of the ClusterQueues below ``cohort``, each Cohort visited once (cycles end)."""
    if cohort.name in seen:
        return
    seen.add(cohort.name)
    yield from cohort.child_cqs
    for child in cohort.child_cohorts.values():
        yield from subtree_cqs(child, seen)
