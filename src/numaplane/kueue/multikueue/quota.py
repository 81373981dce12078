"""Manager quota automation (SPEC §3.19, upstream's MultiKueue ``cqReconciler``, feature gate
``MultiKueueManagerQuotaAutomation``): a manager ClusterQueue whose MultiKueue check names a
config with ``quotaManagement: Automated`` gets, as the quota of its one flavor, the sum of what
its connected workers offer to the same LocalQueues.

:func:`automate_quota` is the whole decision; the I/O (informers on the workers' LocalQueues
and ClusterQueues, the writes) is ``numaplane.kueue.runtime.multikueue.quotaautomation``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from numaplane.api.quantity import Quantity, QuantityError
from numaplane.kueue import constants as c
from numaplane.kueue.multikueue import clusterstatus as cs

Obj = dict[str, Any]
#: ``(status, reason, message)``.
Condition = tuple[str, str, str]

CONDITION: Final = "MultiKueueManagerQuotaAutomation"
_TRUE: Final = "True"
_FALSE: Final = "False"
GATE: Final = "MultiKueueManagerQuotaAutomation"
AUTOMATED: Final = "Automated"
REASON_AUTOMATED: Final = "QuotaAutomated"
REASON_NOT_REQUESTED: Final = "NotRequested"
REASON_UNSUPPORTED: Final = "UnsupportedConfiguration"
MESSAGE_AUTOMATED: Final = (
    "ClusterQueue quota is automatically managed based on MultiKueue workers."
)
MESSAGE_NOT_REQUESTED: Final = "MultiKueue manager quota automation has not been requested."
MESSAGE_CONFIG_NOT_FOUND: Final = "The referenced MultiKueueConfig was not found."
MESSAGE_ONE_FLAVOR: Final = (
    "Quota automation requires that the manager-side ClusterQueue has exactly one ResourceFlavor"
)
MISSING_RESOURCES_PREFIX: Final = (
    "manager-side coveredResources is missing resources configured on workers: "
)


@dataclass(frozen=True)
class WorkerQueues:
    """What one connected worker holds: its LocalQueues and ClusterQueues."""

    local_queues: Sequence[Mapping[str, Any]] = ()
    cluster_queues: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True)
class QuotaDecision:
    """What a manager ClusterQueue should become. ``condition`` None: the condition is
    removed (not a MultiKueue ClusterQueue); ``resources`` None: the spec is left as is, else
    the new ``resources`` of its one flavor; ``error`` set: nothing is decided (the check's
    parameters name no config; upstream's reconcile fails and retries)."""

    condition: Condition | None = None
    resources: tuple[Obj, ...] | None = None
    error: str | None = None


def check_names(cluster_queue: Mapping[str, Any]) -> tuple[str, ...]:
    """The admission checks a ClusterQueue names (v1beta2 strategy, else v1beta1's list)."""
    spec = cluster_queue.get("spec") or {}
    rules = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or ()
    names = tuple(str(rule.get("name") or "") for rule in rules)
    return names or tuple(str(name) for name in spec.get("admissionChecks") or ())


def multikueue_check(
    cluster_queue: Mapping[str, Any], checks: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The first MultiKueue AdmissionCheck (of ``checks``, in their order) the ClusterQueue
    names, or None when it is not a MultiKueue manager ClusterQueue."""
    names = set(check_names(cluster_queue))
    for check in checks:
        spec = check.get("spec") or {}
        name = (check.get("metadata") or {}).get("name")
        if spec.get("controllerName") == c.MULTIKUEUE_CONTROLLER and name in names:
            return check
    return None


def _quantity(value: Any) -> Quantity:
    try:
        return Quantity.of(value if isinstance(value, (str, int)) else str(value))
    except QuantityError:
        # The API server validates quantities; an unreadable one counts for nothing.
        return Quantity.zero()


def worker_totals(
    cluster_queue: str,
    manager_local_queues: Iterable[Mapping[str, Any]],
    workers: Iterable[WorkerQueues],
) -> dict[str, Quantity]:
    """Per resource, the nominal quotas (every flavor of every resource group) of the worker
    ClusterQueues behind the worker LocalQueues named like the manager's LocalQueues of
    ``cluster_queue``; each worker ClusterQueue counts once per worker."""
    keys = {
        _key(lq)
        for lq in manager_local_queues
        if (lq.get("spec") or {}).get("clusterQueue") == cluster_queue
    }
    total: dict[str, Quantity] = {}
    for worker in workers:
        targets = {
            str((lq.get("spec") or {}).get("clusterQueue") or "")
            for lq in worker.local_queues
            if _key(lq) in keys
        }
        for cq in worker.cluster_queues:
            if (cq.get("metadata") or {}).get("name") not in targets:
                continue
            for group in (cq.get("spec") or {}).get("resourceGroups") or ():
                for flavor in group.get("flavors") or ():
                    for row in flavor.get("resources") or ():
                        name = str(row.get("name") or "")
                        amount = _quantity(row.get("nominalQuota", 0))
                        total[name] = total.get(name, Quantity.zero()) + amount
    return total


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _same_resources(current: Sequence[Mapping[str, Any]], wanted: Sequence[Obj]) -> bool:
    # Semantic equality as upstream's: quantities by value; any other field (a borrowing
    # limit, say) makes them differ, and the write drops it.
    if len(current) != len(wanted):
        return False
    for have, want in zip(current, wanted, strict=True):
        if set(have) != {"name", "nominalQuota"} or have.get("name") != want["name"]:
            return False
        if _quantity(have.get("nominalQuota")) != Quantity.parse(want["nominalQuota"]):
            return False
    return True


def automate_quota(
    cluster_queue: Mapping[str, Any],
    check: Mapping[str, Any] | None,
    config: Mapping[str, Any] | None,
    manager_local_queues: Iterable[Mapping[str, Any]],
    workers: Mapping[str, WorkerQueues],
) -> QuotaDecision:
    """The decision for ``cluster_queue``: ``check`` is its MultiKueue check (see
    :func:`multikueue_check`), ``config`` the MultiKueueConfig that check names (None: not
    found), ``workers`` the connected workers of that config."""
    if check is None:
        return QuotaDecision()
    error = cs.parameters_error(check)
    if error is not None:
        return QuotaDecision(error=error)
    if config is None:
        return QuotaDecision((_FALSE, REASON_UNSUPPORTED, MESSAGE_CONFIG_NOT_FOUND))
    if (config.get("spec") or {}).get("quotaManagement") != AUTOMATED:
        return QuotaDecision((_FALSE, REASON_NOT_REQUESTED, MESSAGE_NOT_REQUESTED))
    groups: list[Any] = list((cluster_queue.get("spec") or {}).get("resourceGroups") or [])
    if len(groups) != 1 or len(groups[0].get("flavors") or ()) != 1:
        return QuotaDecision((_FALSE, REASON_UNSUPPORTED, MESSAGE_ONE_FLAVOR))
    name = str((cluster_queue.get("metadata") or {}).get("name") or "")
    totals = worker_totals(name, manager_local_queues, workers.values())
    covered = [str(r) for r in groups[0].get("coveredResources") or ()]
    missing = sorted(set(totals) - set(covered))
    if missing:
        message = f"{MISSING_RESOURCES_PREFIX}[{' '.join(missing)}]"
        return QuotaDecision((_FALSE, REASON_UNSUPPORTED, message))
    wanted = tuple(
        {"name": r, "nominalQuota": str(totals.get(r, Quantity.zero()))} for r in covered
    )
    current = groups[0]["flavors"][0].get("resources") or ()
    resources = None if _same_resources(current, wanted) else wanted
    return QuotaDecision((_TRUE, REASON_AUTOMATED, MESSAGE_AUTOMATED), resources)
