"""Quota reservation of a RAW Workload, as the scheduler writes it (upstream
``SetQuotaReservation`` followed by ``SyncAdmittedCondition`` when the workload already carries
every admission check its ClusterQueue requires)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from numaplane.kueue.api.conditions import set_condition
from numaplane.kueue.api.model import ClusterQueue
from numaplane.kueue.constants import EVICTED, PREEMPTED, QUOTA_RESERVED, REASON_QUOTA_RESERVED
from numaplane.kueue.workload.checks import admission_checks_for_workload, has_all_checks
from numaplane.kueue.workload.status import (
    BLOCKED_ON_PREEMPTION_GATES,
    Status,
    conditions_list,
    generation_of,
    reset_active_condition,
    status_copy,
    sync_admitted_into,
    truncate_condition_message,
)


def reserve_quota(
    raw: Mapping[str, Any],
    admission: Mapping[str, Any],
    now: float,
    *,
    cq: ClusterQueue | None = None,
) -> Status:
    """``status.admission`` set to ``admission`` (its JSON form), ``QuotaReserved=True``
    "Quota reserved in ClusterQueue <cq>", and every ``Evicted``/``Preempted``/
    ``BlockedOnPreemptionGates`` that was True flipped to False (reason ``QuotaReserved``,
    "Previously: <msg>"). ``Admitted`` is synced at once only when the workload already has
    every check ``cq`` requires for this admission (None: no checks required); otherwise the
    workload controller adds the checks first."""
    status = status_copy(raw)
    gen = generation_of(raw)
    status["admission"] = copy.deepcopy(dict(admission))
    message = truncate_condition_message(
        f"Quota reserved in ClusterQueue {admission.get('clusterQueue', '')}"
    )
    conditions = conditions_list(status)
    set_condition(conditions, QUOTA_RESERVED, "True", REASON_QUOTA_RESERVED, message, now, gen)
    for kind in (EVICTED, PREEMPTED, BLOCKED_ON_PREEMPTION_GATES):
        reset_active_condition(status, kind, REASON_QUOTA_RESERVED, now, gen)
    required = admission_checks_for_workload(status, cq) if cq is not None else set()
    if has_all_checks(status, required):
        sync_admitted_into(status, now, gen)
    return status
