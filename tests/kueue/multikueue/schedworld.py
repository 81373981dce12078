"""The SCHED harness of the MultiKueue corpus (upstream ``test/integration/multikueue/scheduler``;
also the shapes of its E2E suite that need no pods): the INT world (intworld) with Kueue's
scheduler running on the manager and on both workers, so the scenario only creates Jobs and
changes queues and priorities; every reservation is a scheduler's. Kueue's Job reconciler runs
everywhere (it suspends and unsuspends Jobs); nothing runs pods, so a Job's ``active`` count
is what the test writes.

The objects are fixture F's (Secrets, clusters, config, check ``ac1``, flavor ``default``,
LocalQueue ``q1``) with the ClusterQueues of a :class:`Shape`: quotas per cluster, preemption
of lower priorities within the queue, and WorkloadPriorityClasses."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from numaplane.testing import kueue_objects as k
from numaplane.testing import multikueue_int as mk
from numaplane.testing.multikueue_int import Clusters
from tests.kueue.multikueue.intworld import Knobs, World, world

Obj = dict[str, Any]
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
#: Upstream's WorkloadPriorityClasses of both suites.
HIGH, LOW = "high-workload", "low-workload"
PRIORITIES: Mapping[str, int] = {HIGH: 300, LOW: 100}
#: The E2E suite's extended resources that steer a job to one worker.
GPU_HIGH, GPU_LOW = "example.com/gpu-h100", "example.com/gpu-v100s"
PREEMPT_LOWER = {"withinClusterQueue": "LowerPriority"}


@dataclass(frozen=True)
class Shape:
    """The ClusterQueue ``q1`` quotas of the manager and of each worker (resource → nominal
    quota, flavor ``default``); the priority classes are made on the workers too when
    ``worker_priorities`` (the E2E suite does, the SCHED suite does not)."""

    manager: Mapping[str, str]
    workers: Mapping[str, Mapping[str, str]]
    worker_priorities: bool = False


#: upstream scheduler_test.go: low (cpu 2, mem 1G) fits worker1 only, high (cpu 1, mem 2G)
#: worker2 only.
SCHED_SHAPE = Shape(
    manager={"cpu": "2", "memory": "2G", "ephemeral-storage": "100G"},
    workers={
        "worker1": {"cpu": "2", "memory": "1G", "ephemeral-storage": "15G"},
        "worker2": {"cpu": "1", "memory": "2G", "ephemeral-storage": "5G"},
    },
)

#: upstream e2e baseline: gpu-h100 2 fits worker1 only, gpu-v100s 2 worker2 only.
E2E_SHAPE = Shape(
    manager={
        "cpu": "2",
        "memory": "4G",
        "ephemeral-storage": "100G",
        GPU_HIGH: "2",
        GPU_LOW: "2",
    },
    workers={
        "worker1": {
            "cpu": "2",
            "memory": "1G",
            "ephemeral-storage": "15G",
            GPU_HIGH: "2",
            GPU_LOW: "1",
        },
        "worker2": {
            "cpu": "1200m",
            "memory": "4G",
            "ephemeral-storage": "5G",
            GPU_HIGH: "1",
            GPU_LOW: "2",
        },
    },
    worker_priorities=True,
)


def queue(quotas: Mapping[str, str], checks: list[str] | None = None) -> Obj:
    """ClusterQueue ``q1`` {default: ``quotas``}, preempting lower priorities within it."""
    extra: Obj = {"admissionChecks": checks} if checks else {}
    return k.cluster_queue(mk.QUEUE, {mk.FLAVOR: dict(quotas)}, preemption=PREEMPT_LOWER, **extra)


def job(namespace: str, name: str, priority: str, requests: Mapping[str, str]) -> Obj:
    """A batch/v1 Job of one pod in ``q1`` with priority class ``priority``, requesting (and
    limited to) ``requests``."""
    body = mk.batch_job(namespace, name, labels={PRIORITY_LABEL: priority})
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"requests": dict(requests), "limits": dict(requests)}
    return body


def _replace_queue(objects: list[Obj], replacement: Obj) -> list[Obj]:
    return [replacement if o["kind"] == "ClusterQueue" else o for o in objects]


@contextlib.asynccontextmanager
async def sched_world(
    clusters: Clusters, shape: Shape, knobs: Knobs | None = None
) -> AsyncIterator[World]:
    """Fixture F on ``clusters`` with ``shape``'s queues and priority classes, Kueue with its
    scheduler on every cluster and MultiKueue on the manager (with ``knobs``, the INT ones by
    default); ``ac1`` Active on entry."""
    classes = [k.workload_priority_class(n, v) for n, v in PRIORITIES.items()]

    def objects(role: str, fixture: list[Obj]) -> list[Obj]:
        if role == "manager":
            return [*classes, *_replace_queue(fixture, queue(shape.manager, [mk.CHECK]))]
        own = _replace_queue(fixture, queue(shape.workers[role]))
        return [*own, *(classes if shape.worker_priorities else [])]

    async with world(clusters, knobs or Knobs(), scheduler=True, objects=objects) as w:
        yield w
