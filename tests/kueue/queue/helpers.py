"""Model values the queue tests build directly (no parsing)."""

from __future__ import annotations

from numaplane.kueue.api.model import (
    BEST_EFFORT_FIFO,
    ClusterQueue,
    LocalQueue,
    PodSet,
    Workload,
)

NS = "ns"


def wl(
    name: str,
    *,
    priority: int = 0,
    t: float = 0.0,
    queue: str = "lq",
    ns: str = NS,
    uid: str = "",
    requeue_at: float | None = None,
    conditions: dict[str, tuple[str, str, str, float]] | None = None,
    active: bool = True,
) -> Workload:
    """A pending workload of one pod."""
    return Workload(
        namespace=ns,
        name=name,
        uid=uid or f"uid-{name}",
        queue_name=queue,
        pod_sets=(PodSet(name="main", count=1, requests={"cpu": 1000}),),
        priority=priority,
        creation_time=t,
        queue_order_time=t,
        requeue_at=requeue_at,
        conditions=conditions or {},
        active=active,
    )


def cq(name: str = "cq", *, strategy: str = BEST_EFFORT_FIFO, cohort: str = "") -> ClusterQueue:
    """A ClusterQueue without quota (the queue manager never reads quota)."""
    return ClusterQueue(name=name, queueing_strategy=strategy, cohort=cohort)


def lq(
    name: str = "lq", cluster_queue: str = "cq", *, ns: str = NS, stop: str = "None"
) -> LocalQueue:
    """A LocalQueue."""
    return LocalQueue(namespace=ns, name=name, cluster_queue=cluster_queue, stop_policy=stop)
