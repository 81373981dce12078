"""A ``Workload`` from its JSON form: podSets with upstream's per-pod requests, the queue-order
timestamp, and the status the core reads (conditions, admission checks, admission, requeue
state); and ``status.admission`` written back as the API holds it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.kueue import constants
from numaplane.kueue.api import model
from numaplane.kueue.api.podrequests import pod_spec_requests
from numaplane.kueue.api.reader import FieldReader, metadata, spec_of, time_field
from numaplane.kueue.resources import resource_quantity_string

#: ``waitForPodsReady.requeuingStrategy.timestamp`` values (upstream ``config.RequeuingTimestamp``).
EVICTION_TIMESTAMP: Final = "Eviction"
CREATION_TIMESTAMP: Final = "Creation"

_DEFAULT_POD_SET: Final = "main"


def _pod_set(r: FieldReader, raw: Any, index: int, excluded: Sequence[str]) -> model.PodSet:
    path = f"spec.podSets[{index}]"
    ps = r.mapping(raw, path)
    name = r.string(ps.get("name"), f"{path}.name") or _DEFAULT_POD_SET
    count = r.integer(ps.get("count"), f"{path}.count", 1)
    if count < 0:
        raise r.fail(f"{path}.count", f"must be greater than or equal to 0, not {count}")
    min_count = r.optional_integer(ps.get("minCount"), f"{path}.minCount")
    template = r.mapping(ps.get("template"), f"{path}.template")
    spec = r.mapping(template.get("spec"), f"{path}.template.spec")
    spath = f"{path}.template.spec"
    affinity = r.mapping(spec.get("affinity"), f"{spath}.affinity")
    node_affinity = r.mapping(affinity.get("nodeAffinity"), f"{spath}.affinity.nodeAffinity")
    required_path = f"{spath}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = r.mapping(
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), required_path
    )
    requests = pod_spec_requests(r, spec, spath)
    if excluded:
        requests = {k: v for k, v in requests.items() if not k.startswith(tuple(excluded))}
    return model.PodSet(
        name=name,
        count=count,
        requests=requests,
        min_count=min_count,
        node_selector=r.string_map(spec.get("nodeSelector"), f"{spath}.nodeSelector"),
        required_node_affinity=r.objects(
            required.get("nodeSelectorTerms"), f"{required_path}.nodeSelectorTerms"
        ),
        tolerations=r.objects(spec.get("tolerations"), f"{spath}.tolerations"),
    )


def parse_admission(
    value: Mapping[str, Any], pod_set_counts: Mapping[str, int] | None = None, *, name: str = ""
) -> model.Admission:
    """``status.admission`` of Workload ``name`` as the model reads it (a podSet's ``count``
    defaults to ``pod_set_counts[podSet]`` as upstream's ``totalRequestsFromAdmission`` does)."""
    return _admission(FieldReader("Workload", {"metadata": {"name": name}}), value, pod_set_counts)


def _admission(
    r: FieldReader, value: Any, pod_set_counts: Mapping[str, int] | None = None
) -> model.Admission:
    adm = r.mapping(value, "status.admission")
    counts = pod_set_counts or {}
    assignments: list[model.PodSetAssignment] = []
    field = "status.admission.podSetAssignments"
    for i, raw in enumerate(r.sequence(adm.get("podSetAssignments"), field)):
        path = f"{field}[{i}]"
        psa = r.mapping(raw, path)
        name = r.string(psa.get("name"), f"{path}.name") or _DEFAULT_POD_SET
        usage = r.mapping(psa.get("resourceUsage"), f"{path}.resourceUsage")
        count = r.integer(psa.get("count"), f"{path}.count", counts.get(name, 0))
        assignments.append(
            model.PodSetAssignment(
                name=name,
                flavors=r.string_map(psa.get("flavors"), f"{path}.flavors"),
                resource_usage={
                    str(res): r.amount(str(res), q, f"{path}.resourceUsage.{res}")
                    for res, q in usage.items()
                },
                count=count,
            )
        )
    return model.Admission(
        cluster_queue=r.string(adm.get("clusterQueue"), "status.admission.clusterQueue"),
        pod_set_assignments=tuple(assignments),
    )


def _conditions(
    r: FieldReader, status: Mapping[str, Any]
) -> dict[str, tuple[str, str, str, float]]:
    out: dict[str, tuple[str, str, str, float]] = {}
    for i, c in enumerate(r.objects(status.get("conditions"), "status.conditions")):
        path = f"status.conditions[{i}]"
        kind = r.string(c.get("type"), f"{path}.type")
        out[kind] = (
            r.string(c.get("status"), f"{path}.status"),
            r.string(c.get("reason"), f"{path}.reason"),
            r.string(c.get("message"), f"{path}.message"),
            time_field(r, c.get("lastTransitionTime"), f"{path}.lastTransitionTime"),
        )
    return out


def _reclaimable(r: FieldReader, status: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, item in enumerate(r.objects(status.get("reclaimablePods"), "status.reclaimablePods")):
        path = f"status.reclaimablePods[{i}]"
        name = r.string(item.get("name"), f"{path}.name") or _DEFAULT_POD_SET
        out[name] = r.integer(item.get("count"), f"{path}.count", 0)
    return out


def _queue_order_time(
    conditions: Mapping[str, tuple[str, str, str, float]], created: float, requeuing_timestamp: str
) -> float:
    """Upstream ``Ordering.GetQueueOrderTimestamp`` with ``PrioritySortingWithinCohort`` on
    (its default): the eviction time of a workload evicted by a PodsReady timeout (when the
    requeuing timestamp is ``Eviction``) or by an admission check, else the creation time."""
    evicted = conditions.get(constants.EVICTED)
    if evicted is not None and evicted[0] == "True":
        if requeuing_timestamp == EVICTION_TIMESTAMP and (
            evicted[1] == constants.REASON_PODS_READY_TIMEOUT
        ):
            return evicted[3]
        if evicted[1] == constants.REASON_ADMISSION_CHECK:
            return evicted[3]
    return created


def parse_workload(
    obj: Mapping[str, Any],
    *,
    requeuing_timestamp: str = EVICTION_TIMESTAMP,
    excluded_resource_prefixes: Sequence[str] = (),
) -> model.Workload:
    """A ``Workload`` as the model reads it. ``requeuing_timestamp`` is the configuration's
    ``waitForPodsReady.requeuingStrategy.timestamp`` (``Eviction`` by default) and
    ``excluded_resource_prefixes`` its ``resources.excludeResourcePrefixes``: resources whose
    names start with one are left out of the requests (upstream ``dropExcludedResources``)."""
    r = FieldReader("Workload", obj)
    meta = metadata(r, obj)
    spec = spec_of(r, obj)
    status = r.mapping(obj.get("status"), "status")
    pod_sets = tuple(
        _pod_set(r, raw, i, excluded_resource_prefixes)
        for i, raw in enumerate(r.sequence(spec.get("podSets"), "spec.podSets"))
    )
    seen: set[str] = set()
    for i, ps in enumerate(pod_sets):
        if ps.name in seen:
            raise r.fail(f"spec.podSets[{i}].name", f'duplicate podSet name "{ps.name}"')
        seen.add(ps.name)
    counts = {ps.name: ps.count for ps in pod_sets}
    admission_raw = status.get("admission")
    admission = None if admission_raw is None else _admission(r, admission_raw, counts)
    conditions = _conditions(r, status)
    checks: dict[str, str] = {}
    for i, c in enumerate(r.objects(status.get("admissionChecks"), "status.admissionChecks")):
        checks[r.string(c.get("name"), f"status.admissionChecks[{i}].name")] = r.string(
            c.get("state"), f"status.admissionChecks[{i}].state", constants.CHECK_PENDING
        )
    requeue = r.mapping(status.get("requeueState"), "status.requeueState")
    requeue_at = requeue.get("requeueAt")
    labels = r.string_map(meta.get("labels"), "metadata.labels")
    created = time_field(r, meta.get("creationTimestamp"), "metadata.creationTimestamp")
    priority = r.integer(spec.get("priority"), "spec.priority", 0)
    count = r.integer(requeue.get("count"), "status.requeueState.count", 0)
    return model.Workload(
        namespace=r.string(meta.get("namespace"), "metadata.namespace"),
        name=meta["name"],
        uid=r.string(meta.get("uid"), "metadata.uid"),
        queue_name=r.string(spec.get("queueName"), "spec.queueName"),
        pod_sets=pod_sets,
        priority=priority,
        creation_time=created,
        queue_order_time=_queue_order_time(conditions, created, requeuing_timestamp),
        admission=admission,
        active=r.boolean(spec.get("active"), "spec.active", True),
        conditions=conditions,
        check_states=checks,
        requeue_at=None
        if requeue_at is None
        else time_field(r, requeue_at, "status.requeueState.requeueAt"),
        requeue_count=count,
        job_uid=labels.get(constants.JOB_UID_LABEL, ""),
        reclaimable_pods=_reclaimable(r, status),
        deleting=meta.get("deletionTimestamp") is not None,
        raw=obj,
    )


def admission_to_dict(admission: model.Admission) -> dict[str, Any]:
    """``status.admission`` as the API holds it, amounts printed as upstream's
    ``ResourceQuantity`` formats them (cpu in milli, memory binary SI), maps in key order as Go
    marshals them."""
    return {
        "clusterQueue": admission.cluster_queue,
        "podSetAssignments": [
            {
                "name": psa.name,
                "flavors": {res: psa.flavors[res] for res in sorted(psa.flavors)},
                "resourceUsage": {
                    res: resource_quantity_string(res, psa.resource_usage[res])
                    for res in sorted(psa.resource_usage)
                },
                "count": psa.count,
            }
            for psa in admission.pod_set_assignments
        ],
    }
