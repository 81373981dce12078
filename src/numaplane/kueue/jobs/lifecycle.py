"""Starting and stopping a batch/v1 Job under Kueue (upstream ``startJob``, ``stopJob`` and
``Job.Stop``): the Job after each write, and the pass's events."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from numaplane.kueue import workload as wl_rules
from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.errors import KueueError
from numaplane.kueue.jobs import batchjob
from numaplane.kueue.jobs.batchjob import (
    STOPPING_ANNOTATION,
    is_suspended,
)
from numaplane.kueue.jobs.decision import (
    FAILED_TO_START,
    REASON_STARTED,
    REASON_STOPPED,
    STATUS,
    UPDATE,
    RunState,
)
from numaplane.kueue.jobs.equivalence import pod_sets_info_from_status
from numaplane.kueue.jobs.podsets import PodSetInfo, PodSetInfoError, from_pod_set

Obj = dict[str, Any]


# --- stop and start ---------------------------------------------------------------------------


def stop_steps(job: Mapping[str, Any], wl: Mapping[str, Any] | None) -> tuple[list[Obj], bool]:
    """Upstream ``Job.Stop`` as the Job after each of its writes: suspended (with the stopping
    annotation) unless already, ``status.startTime`` cleared when set (a status write), then the
    template restored from the Workload's podSets and the annotation dropped — three writes
    because the API allows the template's scheduling directives to change only on a suspended
    Job that has not started. Returns the states and whether the Job stopped now."""
    states: list[Obj] = []
    current = copy.deepcopy(dict(job))
    stopped_now = False
    if not is_suspended(current):
        current = copy.deepcopy(current)
        current.setdefault("spec", {})["suspend"] = True
        meta = current.setdefault("metadata", {})
        meta.setdefault("annotations", {})[STOPPING_ANNOTATION] = "true"
        states.append(current)
        stopped_now = True
    if (current.get("status") or {}).get("startTime"):
        current = copy.deepcopy(current)
        current["status"].pop("startTime", None)
        states.append(current)
    current = copy.deepcopy(current)
    infos: list[PodSetInfo] = [
        from_pod_set(ps) for ps in ((wl or {}).get("spec") or {}).get("podSets") or []
    ]
    batchjob.restore_pod_sets_info(current, infos)
    annotations = current.get("metadata", {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(STOPPING_ANNOTATION, None)
        if not annotations:
            current["metadata"].pop("annotations")
    states.append(current)
    return states, stopped_now


def stop(job: Mapping[str, Any], wl: Mapping[str, Any] | None = None) -> Obj:
    """The Job as a stop leaves it (see :func:`stop_steps`)."""
    states, _ = stop_steps(job, wl)
    return states[-1]


def stop_job(run: RunState, wl: Mapping[str, Any] | None, message: str) -> None:
    states, stopped_now = stop_steps(run.job, wl)
    for state in states:
        status_write = (state.get("status") or {}) != (run.job.get("status") or {})
        run.write_job(state, STATUS if status_write else UPDATE)
    if stopped_now:
        run.event(REASON_STOPPED, message)


def start(
    job: Mapping[str, Any],
    wl: Mapping[str, Any],
    flavors: Mapping[str, ResourceFlavor],
) -> Obj:
    """Upstream ``startJob`` for a batch/v1 Job: the admitted Workload's podSet infos
    (flavors' node labels and tolerations, podSet and queue labels, admission checks'
    podSetUpdates) injected, parallelism set under partial admission, unsuspended. Raises
    :class:`~numaplane.kueue.jobs.podsets.PodSetInfoError` (permanent: the Workload finishes
    ``FailedToStart``) or :class:`KueueError` (a flavor is missing: retried)."""
    return batchjob.run_with_pod_sets_info(job, pod_sets_info_from_status(wl, flavors))


def start_job(run: RunState, wl: Mapping[str, Any]) -> None:
    try:
        new = start(run.job, wl, run.ctx.flavors)
    except PodSetInfoError as err:
        # No point retrying: the Workload finishes as failed to start.
        run.workload_status(wl, wl_rules.finish(wl, FAILED_TO_START, str(err), run.ctx.now))
        run.decision.error = str(err)
        return
    except KueueError as err:
        run.decision.error = str(err)
        return
    run.write_job(new)
    cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
    run.event(REASON_STARTED, f"Admitted by clusterQueue {cq}")
