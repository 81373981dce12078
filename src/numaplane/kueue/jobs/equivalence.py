"""Whether a Workload still matches its Job (upstream ``EquivalentToWorkload``,
``expectedRunningPodSets``, ``getPodSetsInfoFromStatus`` and ``pkg/util/equality``), and the
podSet infos an admission puts into the Job's template.

Pure: objects are the API's JSON dicts.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.api.quantity import Quantity, QuantityError
from numaplane.kueue.api.conditions import is_condition_true
from numaplane.kueue.api.model import ResourceFlavor
from numaplane.kueue.constants import ADMITTED, QUOTA_RESERVED
from numaplane.kueue.errors import KueueError
from numaplane.kueue.jobs.batchjob import (
    is_suspended,
    maximum_execution_time_seconds,
    pod_sets,
)
from numaplane.kueue.jobs.podsets import (
    PODSET_LABEL,
    PodSetInfo,
    PodSetInfoError,
    from_assignment,
    from_update,
    merge_into_template,
)
from numaplane.kueue.jobs.workloads import controller_of

Obj = dict[str, Any]

LOCAL_QUEUE_LABEL: Final = "kueue.x-k8s.io/local-queue-name"
CLUSTER_QUEUE_LABEL: Final = "kueue.x-k8s.io/cluster-queue-name"
_DNS1123_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


# --- admission → pod set infos ------------------------------------------------------------------


def pod_sets_info_from_status(
    wl: Mapping[str, Any], flavors: Mapping[str, ResourceFlavor]
) -> list[PodSetInfo]:
    """Upstream ``getPodSetsInfoFromStatus``: per podSet assignment, the flavors' node labels
    and tolerations, the count, the ``kueue.x-k8s.io/podset`` label, the queue labels
    (``AssignQueueLabelsForPods``, beta, on; the ClusterQueue's only when a DNS-1123 label),
    then every admission check's podSetUpdates for it merged in. A missing flavor raises
    :class:`KueueError`, a conflicting update :class:`PodSetInfoError`."""
    status = wl.get("status") or {}
    admission = status.get("admission") or {}
    spec_pod_sets = (wl.get("spec") or {}).get("podSets") or []
    infos: list[PodSetInfo] = []
    cq = str(admission.get("clusterQueue") or "")
    for i, assignment in enumerate(admission.get("podSetAssignments") or []):
        default_count = int(spec_pod_sets[i].get("count", 1)) if i < len(spec_pod_sets) else 1
        info = from_assignment(assignment, default_count, flavors)
        info.labels[PODSET_LABEL] = info.name
        info.labels[LOCAL_QUEUE_LABEL] = str((wl.get("spec") or {}).get("queueName") or "")
        if _DNS1123_LABEL.match(cq) and len(cq) <= 63:
            info.labels[CLUSTER_QUEUE_LABEL] = cq
        for check in status.get("admissionChecks") or []:
            for update in check.get("podSetUpdates") or []:
                if update.get("name") == info.name:
                    try:
                        info.merge(from_update(update))
                    except PodSetInfoError as err:
                        raise PodSetInfoError(
                            f'in admission check "{check.get("name")}": {err}'
                        ) from err
                    break
        infos.append(info)
    return infos


def _reserved(wl: Mapping[str, Any]) -> bool:
    return is_condition_true((wl.get("status") or {}).get("conditions"), QUOTA_RESERVED)


def is_admitted(wl: Mapping[str, Any]) -> bool:
    """``Admitted=True``."""
    return is_condition_true((wl.get("status") or {}).get("conditions"), ADMITTED)


def _can_be_partially_admitted(wl: Mapping[str, Any]) -> bool:
    for ps in (wl.get("spec") or {}).get("podSets") or []:
        minimum = ps.get("minCount")
        if minimum is not None and int(minimum) < int(ps.get("count", 1)):
            return True
    return False


def expected_running_pod_sets(
    wl: Mapping[str, Any], flavors: Mapping[str, ResourceFlavor]
) -> list[Obj] | None:
    """Upstream ``expectedRunningPodSets``: the Workload's podSets as the running Job shows
    them (admission's injections merged, the admitted count under partial admission); None
    without a reservation or when the admission cannot be read back."""
    if not _reserved(wl):
        return None
    try:
        infos = {info.name: info for info in pod_sets_info_from_status(wl, flavors)}
    except KueueError:
        return None
    running = copy.deepcopy(list((wl.get("spec") or {}).get("podSets") or []))
    partial = _can_be_partially_admitted(wl)
    for ps in running:
        info = infos.get(str(ps.get("name", "")))
        if info is None:
            return None
        try:
            merge_into_template(ps.setdefault("template", {}), info)
        except PodSetInfoError:
            return None
        if partial and ps.get("minCount") is not None:
            ps["count"] = info.count
    return running


# --- equivalence --------------------------------------------------------------------------------


def _semantic(value: Any) -> Any:
    """A JSON value with every quantity under ``resources`` compared by amount, as
    ``equality.Semantic`` compares ``resource.Quantity`` (``1`` equals ``1000m``)."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if key in ("requests", "limits") and isinstance(item, Mapping):
                out[key] = {name: _amount(q) for name, q in item.items()}
            else:
                out[key] = _semantic(item)
        return out
    if isinstance(value, list):
        return [_semantic(item) for item in value]
    return value


def _amount(quantity: Any) -> Any:
    try:
        return Quantity.of(quantity).amount
    except (QuantityError, TypeError, ValueError):
        return quantity


def _empty_as_none(value: Any) -> Any:
    # Go's DeepEqual of nil and empty slices differs, but the API never keeps empty lists
    # distinct from absent ones in what a reader sees, so both read as "none" here.
    return value if value else None


def _compare_pod_specs(
    a: Mapping[str, Any], b: Mapping[str, Any], ignore_tolerations: bool
) -> bool:
    if not ignore_tolerations and _empty_as_none(a.get("tolerations")) != _empty_as_none(
        b.get("tolerations")
    ):
        return False
    for key in ("initContainers", "containers", "resources"):
        if _semantic(_empty_as_none(a.get(key))) != _semantic(_empty_as_none(b.get(key))):
            return False
    claims_a = {c.get("name"): c for c in a.get("resourceClaims") or []}
    claims_b = {c.get("name"): c for c in b.get("resourceClaims") or []}
    return claims_a == claims_b


def compare_pod_sets(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], *, ignore_tolerations: bool
) -> bool:
    """Upstream ``equality.ComparePodSetSlices``: same length, and pairwise the same count,
    minCount, tolerations (unless ``ignore_tolerations``), init containers, containers,
    pod-level resources and resource claims. Node selectors and labels do not count."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if int(x.get("count", 1)) != int(y.get("count", 1)):
            return False
        if x.get("minCount", -1) != y.get("minCount", -1):
            return False
        spec_x = (x.get("template") or {}).get("spec") or {}
        spec_y = (y.get("template") or {}).get("spec") or {}
        if not _compare_pod_specs(spec_x, spec_y, ignore_tolerations):
            return False
    return True


def equivalent(
    job: Mapping[str, Any],
    wl: Mapping[str, Any],
    flavors: Mapping[str, ResourceFlavor] | None = None,
) -> bool:
    """Upstream ``EquivalentToWorkload``: the Workload is controlled by an owner of the Job's
    name, has the Job's maximum execution time, and its podSets match the Job's — as they run
    under the admission when it has quota (tolerations ignored once admitted), or as written
    while the Job is still suspended."""
    owner = controller_of(wl)
    if owner is None or owner.get("name") != _meta(job).get("name"):
        return False
    spec = wl.get("spec") or {}
    max_exec = spec.get("maximumExecutionTimeSeconds")
    if (max_exec if max_exec is not None else -1) != (maximum_execution_time_seconds(job) or -1):
        return False
    job_pod_sets = pod_sets(job)
    admitted = is_admitted(wl)
    running = expected_running_pod_sets(wl, flavors or {})
    spec_pod_sets = spec.get("podSets") or []
    if running is not None:
        if compare_pod_sets(job_pod_sets, running, ignore_tolerations=admitted):
            return True
        return is_suspended(job) and compare_pod_sets(
            job_pod_sets, spec_pod_sets, ignore_tolerations=admitted
        )
    return compare_pod_sets(job_pod_sets, spec_pod_sets, ignore_tolerations=admitted)
