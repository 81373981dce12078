"""Kueue's objects from the JSON form the API serves to the immutable values of
:mod:`numaplane.kueue.api.model`, with upstream's defaults (``apis/kueue/v1beta2``) applied.

v1beta2 field names are read first; the v1beta1 names a client may still write (``spec.cohort``,
``spec.admissionChecks``, the ``Borrow``/``Preempt`` fungibility values) are read as fallbacks,
because numaplane's API server stores what it is sent without a conversion webhook.

Workloads are read by :mod:`numaplane.kueue.api.workload_parse` (re-exported here), their
per-pod requests by :mod:`numaplane.kueue.api.podrequests`.

Every unusable object raises :class:`~numaplane.kueue.errors.KueueObjectError` naming the kind,
the object, the field and the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from numaplane.kueue.api import model
from numaplane.kueue.api.podrequests import pod_requests
from numaplane.kueue.api.reader import FieldReader, metadata, spec_of
from numaplane.kueue.api.workload_parse import (
    CREATION_TIMESTAMP,
    EVICTION_TIMESTAMP,
    admission_to_dict,
    parse_admission,
    parse_workload,
)

__all__ = [
    "CREATION_TIMESTAMP",
    "EVICTION_TIMESTAMP",
    "PARSERS",
    "admission_to_dict",
    "parse_admission",
    "parse_admission_check",
    "parse_cluster_queue",
    "parse_cohort",
    "parse_local_queue",
    "parse_resource_flavor",
    "parse_workload",
    "parse_workload_priority_class",
    "pod_requests",
]

# v1beta1 spelled the "stop searching" fungibility policies after what stopped the search.
_FUNGIBILITY_V1BETA1: Final = {"Borrow": model.MAY_STOP_SEARCH, "Preempt": model.MAY_STOP_SEARCH}
_FUNGIBILITY: Final = frozenset({model.MAY_STOP_SEARCH, model.TRY_NEXT_FLAVOR})
_PREFERENCES: Final = frozenset({model.BORROWING_OVER_PREEMPTION, model.PREEMPTION_OVER_BORROWING})
_RECLAIM: Final = frozenset({model.NEVER, model.LOWER_PRIORITY, model.ANY})
_WITHIN_CQ: Final = frozenset(
    {model.NEVER, model.LOWER_PRIORITY, model.LOWER_OR_NEWER_EQUAL_PRIORITY}
)
_BORROW_WITHIN: Final = frozenset({model.NEVER, model.LOWER_PRIORITY})
_QUEUEING: Final = frozenset({model.BEST_EFFORT_FIFO, model.STRICT_FIFO})
_STOP: Final = frozenset({model.STOP_NONE, model.STOP_HOLD, model.STOP_HOLD_AND_DRAIN})


def _fair_weight(r: FieldReader, spec: Mapping[str, Any]) -> int:
    fair = r.mapping(spec.get("fairSharing"), "spec.fairSharing")
    weight = fair.get("weight")
    if weight is None:
        return 1000
    return r.quantity(weight, "spec.fairSharing.weight").milli_value()


# --- quota --------------------------------------------------------------------------------------


def _resource_quota(r: FieldReader, rq: Mapping[str, Any], path: str) -> model.ResourceQuota:
    name = r.string(rq.get("name"), f"{path}.name")
    amounts: dict[str, int | None] = {}
    for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
        value = rq.get(key)
        amount = None if value is None else r.amount(name, value, f"{path}.{key}")
        if amount is not None and amount < 0:
            # Upstream's webhook refuses negative quota; the quota algebra assumes none.
            raise r.fail(f"{path}.{key}", "must be greater than or equal to 0")
        amounts[key] = amount
    nominal = amounts["nominalQuota"] or 0
    lending = amounts["lendingLimit"]
    if lending is not None and lending > nominal:
        raise r.fail(f"{path}.lendingLimit", "must be less than or equal to the nominalQuota")
    return model.ResourceQuota(
        name=name,
        nominal=nominal,
        borrowing_limit=amounts["borrowingLimit"],
        lending_limit=lending,
    )


def _resource_groups(r: FieldReader, value: Any) -> tuple[model.ResourceGroup, ...]:
    groups: list[model.ResourceGroup] = []
    # Upstream's webhook: a resource, and a flavor, belongs to one group only.
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for gi, raw_group in enumerate(r.sequence(value, "spec.resourceGroups")):
        gpath = f"spec.resourceGroups[{gi}]"
        group = r.mapping(raw_group, gpath)
        covered = tuple(
            r.string(c, f"{gpath}.coveredResources[{i}]")
            for i, c in enumerate(
                r.sequence(group.get("coveredResources"), f"{gpath}.coveredResources")
            )
        )
        for i, resource in enumerate(covered):
            if resource in seen_resources:
                raise r.fail(f"{gpath}.coveredResources[{i}]", f'Duplicate value: "{resource}"')
            seen_resources.add(resource)
        flavors: list[model.FlavorQuotas] = []
        for fi, raw_flavor in enumerate(r.sequence(group.get("flavors"), f"{gpath}.flavors")):
            fpath = f"{gpath}.flavors[{fi}]"
            flavor = r.mapping(raw_flavor, fpath)
            fname = r.string(flavor.get("name"), f"{fpath}.name")
            if not fname:
                raise r.fail(f"{fpath}.name", "required")
            if fname in seen_flavors:
                raise r.fail(f"{fpath}.name", f'Duplicate value: "{fname}"')
            seen_flavors.add(fname)
            quotas: list[model.ResourceQuota] = []
            raw_resources = r.sequence(flavor.get("resources"), f"{fpath}.resources")
            for ri, raw_rq in enumerate(raw_resources):
                rpath = f"{fpath}.resources[{ri}]"
                rq = r.mapping(raw_rq, rpath)
                quotas.append(_resource_quota(r, rq, rpath))
            names = tuple(q.name for q in quotas)
            if names != covered:
                # Upstream's webhook: every flavor lists exactly the covered resources, in order.
                raise r.fail(
                    f"{fpath}.resources",
                    f"must list the coveredResources {list(covered)} in order, not {list(names)}",
                )
            flavors.append(model.FlavorQuotas(name=fname, resources=tuple(quotas)))
        groups.append(model.ResourceGroup(covered_resources=covered, flavors=tuple(flavors)))
    return tuple(groups)


# --- ClusterQueue, Cohort -----------------------------------------------------------------------


def _preemption(r: FieldReader, value: Any) -> model.PreemptionPolicy:
    pre = r.mapping(value, "spec.preemption")
    bwc = r.mapping(pre.get("borrowWithinCohort"), "spec.preemption.borrowWithinCohort")
    return model.PreemptionPolicy(
        reclaim_within_cohort=r.choice(
            pre.get("reclaimWithinCohort"),
            "spec.preemption.reclaimWithinCohort",
            _RECLAIM,
            model.NEVER,
        ),
        within_cluster_queue=r.choice(
            pre.get("withinClusterQueue"),
            "spec.preemption.withinClusterQueue",
            _WITHIN_CQ,
            model.NEVER,
        ),
        borrow_within_cohort=model.BorrowWithinCohort(
            policy=r.choice(
                bwc.get("policy"),
                "spec.preemption.borrowWithinCohort.policy",
                _BORROW_WITHIN,
                model.NEVER,
            ),
            max_priority_threshold=r.optional_integer(
                bwc.get("maxPriorityThreshold"),
                "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
            ),
        ),
    )


def _fungibility_policy(r: FieldReader, value: Any, field: str, default: str) -> str:
    text = r.string(value, field) or default
    return r.choice(_FUNGIBILITY_V1BETA1.get(text, text), field, _FUNGIBILITY, default)


def _fungibility(r: FieldReader, value: Any) -> model.FlavorFungibility:
    ff = r.mapping(value, "spec.flavorFungibility")
    preference = ff.get("preference")
    return model.FlavorFungibility(
        when_can_borrow=_fungibility_policy(
            r,
            ff.get("whenCanBorrow"),
            "spec.flavorFungibility.whenCanBorrow",
            model.MAY_STOP_SEARCH,
        ),
        when_can_preempt=_fungibility_policy(
            r,
            ff.get("whenCanPreempt"),
            "spec.flavorFungibility.whenCanPreempt",
            model.TRY_NEXT_FLAVOR,
        ),
        preference=None
        if preference is None
        else r.choice(preference, "spec.flavorFungibility.preference", _PREFERENCES, ""),
    )


def _admission_checks(
    r: FieldReader, spec: Mapping[str, Any]
) -> tuple[model.AdmissionCheckRule, ...]:
    strategy = r.mapping(spec.get("admissionChecksStrategy"), "spec.admissionChecksStrategy")
    field = "spec.admissionChecksStrategy.admissionChecks"
    rules: list[model.AdmissionCheckRule] = []
    for i, raw in enumerate(r.sequence(strategy.get("admissionChecks"), field)):
        rule = r.mapping(raw, f"{field}[{i}]")
        flavors = r.sequence(rule.get("onFlavors"), f"{field}[{i}].onFlavors")
        rules.append(
            model.AdmissionCheckRule(
                name=r.string(rule.get("name"), f"{field}[{i}].name"),
                on_flavors=tuple(
                    r.string(f, f"{field}[{i}].onFlavors[{j}]") for j, f in enumerate(flavors)
                ),
            )
        )
    if rules:
        return tuple(rules)
    # v1beta1's flat list: each check applies to every flavor.
    flat = r.sequence(spec.get("admissionChecks"), "spec.admissionChecks")
    return tuple(
        model.AdmissionCheckRule(name=r.string(name, f"spec.admissionChecks[{i}]"))
        for i, name in enumerate(flat)
    )


def parse_cluster_queue(
    obj: Mapping[str, Any], *, quota_check_strategy: str = model.BLOCK_UNDECLARED
) -> model.ClusterQueue:
    """A ``ClusterQueue`` (v1beta2, or v1beta1 field names) as the model reads it.
    ``quota_check_strategy`` is the configuration's (``resources.quotaCheckStrategy``): the
    object has no such field."""
    r = FieldReader("ClusterQueue", obj)
    meta = metadata(r, obj)
    spec = spec_of(r, obj)
    cohort = spec.get("cohortName")
    if cohort is None:
        cohort = spec.get("cohort")
    selector = spec.get("namespaceSelector")
    return model.ClusterQueue(
        name=meta["name"],
        resource_groups=_resource_groups(r, spec.get("resourceGroups")),
        cohort=r.string(cohort, "spec.cohortName"),
        queueing_strategy=r.choice(
            spec.get("queueingStrategy"),
            "spec.queueingStrategy",
            _QUEUEING,
            model.BEST_EFFORT_FIFO,
        ),
        namespace_selector=None
        if selector is None
        else r.mapping(selector, "spec.namespaceSelector"),
        preemption=_preemption(r, spec.get("preemption")),
        flavor_fungibility=_fungibility(r, spec.get("flavorFungibility")),
        admission_checks=_admission_checks(r, spec),
        stop_policy=r.choice(spec.get("stopPolicy"), "spec.stopPolicy", _STOP, model.STOP_NONE),
        quota_check_strategy=quota_check_strategy,
        fair_weight_milli=_fair_weight(r, spec),
        uid=r.string(meta.get("uid"), "metadata.uid"),
        deleting=meta.get("deletionTimestamp") is not None,
        raw=obj,
    )


def parse_cohort(obj: Mapping[str, Any]) -> model.Cohort:
    """A ``Cohort`` as the model reads it."""
    r = FieldReader("Cohort", obj)
    meta = metadata(r, obj)
    spec = spec_of(r, obj)
    return model.Cohort(
        name=meta["name"],
        parent=r.string(spec.get("parentName"), "spec.parentName"),
        resource_groups=_resource_groups(r, spec.get("resourceGroups")),
        fair_weight_milli=_fair_weight(r, spec),
        raw=obj,
    )


# --- flavors, queues, checks, priorities --------------------------------------------------------


def parse_resource_flavor(obj: Mapping[str, Any]) -> model.ResourceFlavor:
    """A ``ResourceFlavor`` as the model reads it."""
    r = FieldReader("ResourceFlavor", obj)
    meta = metadata(r, obj)
    spec = spec_of(r, obj)
    topology = spec.get("topologyName")
    return model.ResourceFlavor(
        name=meta["name"],
        node_labels=r.string_map(spec.get("nodeLabels"), "spec.nodeLabels"),
        node_taints=r.objects(spec.get("nodeTaints"), "spec.nodeTaints"),
        tolerations=r.objects(spec.get("tolerations"), "spec.tolerations"),
        topology_name=None if topology is None else r.string(topology, "spec.topologyName"),
    )


def parse_local_queue(obj: Mapping[str, Any]) -> model.LocalQueue:
    """A ``LocalQueue`` as the model reads it."""
    r = FieldReader("LocalQueue", obj)
    meta = metadata(r, obj)
    spec = spec_of(r, obj)
    cluster_queue = r.string(spec.get("clusterQueue"), "spec.clusterQueue")
    if not cluster_queue:
        raise r.fail("spec.clusterQueue", "required")
    return model.LocalQueue(
        namespace=r.string(meta.get("namespace"), "metadata.namespace"),
        name=meta["name"],
        cluster_queue=cluster_queue,
        stop_policy=r.choice(spec.get("stopPolicy"), "spec.stopPolicy", _STOP, model.STOP_NONE),
    )


def parse_admission_check(obj: Mapping[str, Any]) -> model.AdmissionCheck:
    """An ``AdmissionCheck``; ``active`` is its ``Active`` condition being True."""
    r = FieldReader("AdmissionCheck", obj)
    meta = metadata(r, obj)
    spec = spec_of(r, obj)
    status = r.mapping(obj.get("status"), "status")
    conditions = r.objects(status.get("conditions"), "status.conditions")
    parameters = spec.get("parameters")
    return model.AdmissionCheck(
        name=meta["name"],
        controller_name=r.string(spec.get("controllerName"), "spec.controllerName"),
        parameters=None if parameters is None else r.mapping(parameters, "spec.parameters"),
        active=any(c.get("type") == "Active" and c.get("status") == "True" for c in conditions),
    )


def parse_workload_priority_class(obj: Mapping[str, Any]) -> model.WorkloadPriorityClass:
    """A ``WorkloadPriorityClass`` (its ``value`` is top-level, as in PriorityClass)."""
    r = FieldReader("WorkloadPriorityClass", obj)
    meta = metadata(r, obj)
    value = r.optional_integer(obj.get("value"), "value")
    if value is None:
        raise r.fail("value", "required")
    return model.WorkloadPriorityClass(name=meta["name"], value=value)


#: The parser of every kind but Workload (which takes the configuration's options:
#: :func:`parse_workload`).
PARSERS: Final[Mapping[str, Callable[[Mapping[str, Any]], object]]] = {
    "ResourceFlavor": parse_resource_flavor,
    "ClusterQueue": parse_cluster_queue,
    "Cohort": parse_cohort,
    "LocalQueue": parse_local_queue,
    "AdmissionCheck": parse_admission_check,
    "WorkloadPriorityClass": parse_workload_priority_class,
}
