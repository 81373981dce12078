"""Events (both APIs), PriorityClasses and Priority admission, RBAC kinds, reviews, the CRD
kind's hooks, and the shape of BUILTIN_RESOURCES."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.errors import FieldError, StatusError, invalid, invalid_value
from numaplane.apiserver.kinds import BUILTIN_RESOURCES, CRDHooks, builtin_resources
from numaplane.apiserver.kinds.events import (
    CORE_EVENT_PRINTER,
    CORE_EVENT_STRATEGY,
    EVENTS_V1_STRATEGY,
    core_event_fields,
    events_v1_fields,
    to_core_event,
    to_events_v1,
)
from numaplane.apiserver.kinds.rbac import (
    BINDING_PRINTER,
    CLUSTER_ROLE_BINDING_STRATEGY,
    CLUSTER_ROLE_STRATEGY,
    ROLE_BINDING_STRATEGY,
    ROLE_STRATEGY,
)
from numaplane.apiserver.kinds.reviews import ACCESS_REVIEW_STRATEGY
from numaplane.apiserver.kinds.scheduling import (
    PRIORITY_CLASS_STRATEGY,
    SYSTEM_PRIORITY_CLASSES,
    admit_pod_priority,
    admit_priority_class,
)
from numaplane.apiserver.kinds.strategy import KindStrategy

NOW = 1_700_000_000.0
CREATED = "2023-11-14T22:10:00Z"

CORE_EVENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "p.1", "namespace": "default"},
    "involvedObject": {
        "kind": "Pod",
        "name": "p",
        "namespace": "default",
        "fieldPath": "spec.containers{c}",
    },
    "reason": "Pulled",
    "message": "Container image pulled \n",
    "type": "Normal",
    "source": {"component": "kubelet", "host": "n1"},
    "firstTimestamp": "2023-11-14T22:00:00Z",
    "lastTimestamp": "2023-11-14T22:10:00Z",
    "count": 3,
}

V1_EVENT: dict[str, Any] = {
    "apiVersion": "events.k8s.io/v1",
    "kind": "Event",
    "metadata": {"name": "p.2", "namespace": "default"},
    "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
    "reason": "Scheduled",
    "note": "assigned",
    "type": "Normal",
    "action": "Binding",
    "eventTime": "2023-11-14T22:13:00.000000Z",
    "reportingController": "default-scheduler",
    "reportingInstance": "sched-1",
}


def test_core_event_row_and_fields() -> None:
    assert CORE_EVENT_PRINTER.row(CORE_EVENT, NOW) == [
        "3m20s",
        "Normal",
        "Pulled",
        "pod/p",
        "spec.containers{c}",
        "kubelet, n1",
        "Container image pulled",
        "13m",
        3,
        "p.1",
    ]
    fields = core_event_fields(CORE_EVENT)
    assert fields["involvedObject.name"] == "p"
    assert fields["source"] == "kubelet"
    assert fields["reportingComponent"] == ""
    assert CORE_EVENT_STRATEGY.validate(copy.deepcopy(CORE_EVENT)) == []
    defaulted = copy.deepcopy(CORE_EVENT)
    CORE_EVENT_STRATEGY.default(defaulted)
    assert (defaulted["reportingComponent"], defaulted["reportingInstance"]) == ("", "")
    assert defaulted["eventTime"] is None


def test_events_v1_round_trip_and_fields() -> None:
    core = to_core_event(V1_EVENT)
    assert core["involvedObject"] == V1_EVENT["regarding"]
    assert core["reportingComponent"] == "default-scheduler"
    assert to_events_v1(core) == V1_EVENT
    assert CORE_EVENT_PRINTER.row(core, NOW)[:4] == ["20s", "Normal", "Scheduled", "pod/p"]
    fields = events_v1_fields(V1_EVENT)
    assert fields["regarding.kind"] == "Pod"
    assert fields["reportingController"] == "default-scheduler"
    assert fields["deprecatedSource"] == "default-scheduler"
    assert EVENTS_V1_STRATEGY.validate(copy.deepcopy(V1_EVENT)) == []


@dataclass(frozen=True)
class EventCase:
    name: str
    strategy: KindStrategy
    event: dict[str, Any]
    message: str


EVENT_CASES = [
    EventCase(
        "core event in another namespace than its object",
        CORE_EVENT_STRATEGY,
        {**CORE_EVENT, "metadata": {"name": "p.1", "namespace": "other"}},
        'Event "p.1" is invalid: involvedObject.namespace: Invalid value: "default": does not '
        "match event.namespace",
    ),
    EventCase(
        "events.k8s.io event without eventTime and with a bad type",
        EVENTS_V1_STRATEGY,
        {**{k: v for k, v in V1_EVENT.items() if k != "eventTime"}, "type": "Odd"},
        'Event "p.2" is invalid: [eventTime: Required value, type: Invalid value: "": has '
        "invalid value: Odd]",
    ),
    EventCase(
        "events.k8s.io event without a reporting controller",
        EVENTS_V1_STRATEGY,
        {k: v for k, v in V1_EVENT.items() if k != "reportingController"},
        'Event "p.2" is invalid: [reportingController: Required value, reportingController: '
        'Invalid value: "": name part must be non-empty, reportingController: Invalid value: "": '
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]",
    ),
]


@pytest.mark.parametrize("case", EVENT_CASES, ids=lambda c: c.name)
def test_invalid_events(case: EventCase) -> None:
    errors = case.strategy.validate(copy.deepcopy(case.event))
    assert invalid("", "Event", case.event["metadata"]["name"], errors).message == case.message


def priority_class(name: str, value: int, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "value": value, **extra}


@dataclass(frozen=True)
class PriorityCase:
    name: str
    obj: dict[str, Any]
    message: str


PRIORITY_CASES = [
    PriorityCase("user class", priority_class("high", 1000), ""),
    PriorityCase("system class", copy.deepcopy(SYSTEM_PRIORITY_CLASSES[0]), ""),
    PriorityCase(
        "reserved prefix",
        priority_class("system-mine", 10),
        'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: '
        "priority class names with 'system-' prefix are reserved for system use only. error: "
        "system-mine is not a known system priority class",
    ),
    PriorityCase(
        "system class with another value",
        priority_class("system-node-critical", 5),
        'PriorityClass.scheduling.k8s.io "system-node-critical" is invalid: metadata.name: '
        "Forbidden: priority class names with 'system-' prefix are reserved for system use "
        "only. error: value of system-node-critical PriorityClass must be 2000001000",
    ),
    PriorityCase(
        "user value too high",
        priority_class("huge", 2_000_000_000),
        'PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed '
        "value of a user defined priority is 1000000000",
    ),
]


@pytest.mark.parametrize("case", PRIORITY_CASES, ids=lambda c: c.name)
def test_priority_classes(case: PriorityCase) -> None:
    obj = copy.deepcopy(case.obj)
    PRIORITY_CLASS_STRATEGY.default(obj)
    assert obj["preemptionPolicy"] == "PreemptLowerPriority"
    errors = PRIORITY_CLASS_STRATEGY.validate(obj)
    name = obj["metadata"]["name"]
    message = invalid("scheduling.k8s.io", "PriorityClass", name, errors).message if errors else ""
    assert message == case.message


def test_only_one_default_priority_class() -> None:
    existing = [priority_class("old", 1, globalDefault=True)]
    admit_priority_class(priority_class("plain", 2), existing, creating=True)
    admit_priority_class(priority_class("old", 3, globalDefault=True), existing, creating=False)
    with pytest.raises(StatusError) as caught:
        admit_priority_class(priority_class("new", 2, globalDefault=True), existing, creating=True)
    assert (caught.value.code, caught.value.message) == (
        403,
        'priorityclasses.scheduling.k8s.io "new" is forbidden: PriorityClass old is already '
        "marked as default. Only one default can exist",
    )


def test_priority_class_value_is_immutable() -> None:
    old = priority_class("high", 1000, preemptionPolicy="Never")
    old["metadata"]["resourceVersion"] = "1"
    new = {**copy.deepcopy(old), "value": 2000}
    assert [str(e) for e in PRIORITY_CLASS_STRATEGY.validate_update(new, old)] == [
        "value: Forbidden: may not be changed in an update."
    ]


@dataclass(frozen=True)
class AdmitCase:
    name: str
    spec: dict[str, Any]
    classes: tuple[dict[str, Any], ...]
    expected: dict[str, Any] | str


ADMIT_CASES = [
    AdmitCase("no classes", {}, (), {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"}),
    AdmitCase(
        "named class",
        {"priorityClassName": "high"},
        (priority_class("high", 1000, preemptionPolicy="Never"),),
        {"priorityClassName": "high", "priority": 1000, "preemptionPolicy": "Never"},
    ),
    AdmitCase(
        "global default",
        {},
        (priority_class("d", 7, globalDefault=True),),
        {"priorityClassName": "d", "priority": 7, "preemptionPolicy": "PreemptLowerPriority"},
    ),
    AdmitCase(
        "unknown class",
        {"priorityClassName": "nope"},
        (),
        'pods "p" is forbidden: no PriorityClass with name nope was found',
    ),
    AdmitCase(
        "conflicting priority",
        {"priorityClassName": "high", "priority": 5},
        (priority_class("high", 1000),),
        'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod '
        "spec; priority admission controller computed 1000 from the given PriorityClass name",
    ),
]


@pytest.mark.parametrize("case", ADMIT_CASES, ids=lambda c: c.name)
def test_admit_pod_priority(case: AdmitCase) -> None:
    pod = {"metadata": {"name": "p"}, "spec": dict(case.spec)}
    if isinstance(case.expected, str):
        with pytest.raises(StatusError) as caught:
            admit_pod_priority(pod, case.classes)
        assert (caught.value.code, caught.value.message) == (403, case.expected)
    else:
        admit_pod_priority(pod, case.classes)
        assert {k: pod["spec"].get(k) for k in case.expected} == case.expected


@dataclass(frozen=True)
class RBACCase:
    name: str
    strategy: KindStrategy
    kind: str
    obj: dict[str, Any]
    messages: tuple[str, ...]


RBAC_CASES = [
    RBACCase(
        "role rule without verbs or groups",
        ROLE_STRATEGY,
        "Role",
        {"metadata": {"name": "r", "namespace": "ns"}, "rules": [{"resources": ["pods"]}]},
        (
            "rules[0].verbs: Required value: verbs must contain at least one value",
            "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        ),
    ),
    RBACCase(
        "namespaced role with URLs",
        ROLE_STRATEGY,
        "Role",
        {
            "metadata": {"name": "r", "namespace": "ns"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}],
        },
        (
            'rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to '
            "non-resource URLs",
        ),
    ),
    RBACCase(
        "cluster role with colon in its name",
        CLUSTER_ROLE_STRATEGY,
        "ClusterRole",
        {
            "metadata": {"name": "system:x"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
        },
        (),
    ),
    RBACCase(
        "cluster role binding to a Role",
        CLUSTER_ROLE_BINDING_STRATEGY,
        "ClusterRoleBinding",
        {
            "metadata": {"name": "b"},
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
        },
        (
            'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
            "subjects[0].namespace: Required value",
        ),
    ),
    RBACCase(
        "role binding with an odd subject",
        ROLE_BINDING_STRATEGY,
        "RoleBinding",
        {
            "metadata": {"name": "b", "namespace": "ns"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Robot", "name": "r"}, {"kind": "User", "name": "u"}],
        },
        (
            'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
            '"User", "Group"',
        ),
    ),
]


@pytest.mark.parametrize("case", RBAC_CASES, ids=lambda c: c.name)
def test_rbac_validation(case: RBACCase) -> None:
    obj = copy.deepcopy(case.obj)
    case.strategy.default(obj)
    assert tuple(str(e) for e in case.strategy.validate(obj)) == case.messages


def test_role_binding_defaults_row_and_immutable_role_ref() -> None:
    binding: dict[str, Any] = {
        "metadata": {
            "name": "b",
            "namespace": "ns",
            "creationTimestamp": CREATED,
            "resourceVersion": "1",
        },
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
        ],
    }
    ROLE_BINDING_STRATEGY.default(binding)
    assert binding["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert binding["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    assert "apiGroup" not in binding["subjects"][2]
    assert BINDING_PRINTER.row(binding, NOW) == [
        "b",
        "ClusterRole/view",
        "3m20s",
        "alice",
        "devs",
        "ns/sa",
    ]
    changed = copy.deepcopy(binding)
    changed["roleRef"]["name"] = "edit"
    errors = [str(e) for e in ROLE_BINDING_STRATEGY.validate_update(changed, binding)]
    assert errors == [
        'roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole",'
        '"name":"edit"}: cannot change roleRef'
    ]


def test_access_review_needs_one_kind_of_attributes() -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {},
    }
    assert [str(e) for e in ACCESS_REVIEW_STRATEGY.validate(review)] == [
        "spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or "
        "resourceAttributes must be specified"
    ]
    review["spec"] = {"resourceAttributes": {"verb": "get", "resource": "pods"}}
    assert ACCESS_REVIEW_STRATEGY.validate(review) == []


def test_crd_kind_delegates_to_its_hooks() -> None:
    seen: list[tuple[str, bool]] = []

    def validate(crd: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        seen.append((crd["metadata"]["name"], old is None))
        return [invalid_value("spec.group", "", "must be the group")]

    info = {r.resource: r for r in builtin_resources(CRDHooks(validate=validate))}[
        "customresourcedefinitions"
    ]
    crd: dict[str, Any] = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {"versions": [{"name": "v1", "served": True, "storage": True}]},
        "status": {"conditions": []},
    }
    info.strategy.prepare_for_create(crd)
    assert crd["status"] == {"storedVersions": ["v1"]}
    assert crd["metadata"]["generation"] == 1
    assert [str(e) for e in info.strategy.validate(crd)] == [
        'spec.group: Invalid value: "": must be the group'
    ]
    assert seen == [("widgets.example.com", True)]


def test_crd_status_comes_from_the_hook() -> None:
    def status(crd: dict[str, Any]) -> dict[str, Any]:
        return {**crd["status"], "conditions": [{"type": "Established", "status": "True"}]}

    main = {r.resource: r for r in builtin_resources(CRDHooks(status=status))}[
        "customresourcedefinitions"
    ].strategy
    crd: dict[str, Any] = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {"versions": [{"name": "v1", "storage": True}]},
    }
    main.prepare_for_create(crd)
    assert crd["status"] == {
        "storedVersions": ["v1"],
        "conditions": [{"type": "Established", "status": "True"}],
    }
    new = copy.deepcopy(crd)
    new["spec"]["versions"] = [{"name": "v1"}, {"name": "v2", "storage": True}]
    main.prepare_for_update(new, crd)
    assert new["status"]["storedVersions"] == ["v1", "v2"]
    assert main.bumps_generation(new, crd)


def test_builtin_resources_shape() -> None:
    by_name = {r.group_resource: r for r in BUILTIN_RESOURCES}
    assert len(by_name) == len(BUILTIN_RESOURCES) == 19
    assert by_name["pods"].short_names == ("po",)
    assert by_name["pods"].categories == ("all",)
    assert by_name["pods"].subresources == ("status", "binding", "log")
    assert by_name["jobs.batch"].categories == ("all",)
    assert "deletecollection" not in by_name["namespaces"].verbs
    assert by_name["selfsubjectaccessreviews.authorization.k8s.io"].verbs == ("create",)
    assert by_name["customresourcedefinitions.apiextensions.k8s.io"].short_names == ("crd", "crds")
    assert by_name["serviceaccounts"].subresources == ("token",)
    for info in BUILTIN_RESOURCES:
        # Every printer's row has one cell per column, even for an empty object.
        assert len(info.table.row({"metadata": {"name": "x"}}, NOW)) == len(info.table.columns())
        fields = info.field_set({"metadata": {"name": "x", "namespace": "ns"}})
        assert fields["metadata.name"] == "x"
        assert ("metadata.namespace" in fields) == info.namespaced
        assert (info.status_strategy is not None) == ("status" in info.subresources)
