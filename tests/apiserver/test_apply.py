"""Server-side apply and managedFields: ownership, conflicts (upstream's wording), force,
removal of fields no longer applied, the bookkeeping of ordinary writes, and the fieldsV1
encoding (cases after the Kubernetes server-side apply documentation)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.apiserver.apply import (
    ANCIENT_CHANGES,
    MAX_UPDATE_MANAGERS,
    apply,
    record_update,
)
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.fieldpath import (
    compare,
    from_fields_v1,
    merge,
    path_string,
    to_field_set,
    to_fields_v1,
)
from numaplane.apiserver.patchmeta import UNKNOWN, Schema, builtin_schema

T0, T1, T2, T3 = (f"2024-01-0{d}T00:00:00Z" for d in range(1, 5))
POD_SCHEMA = builtin_schema("", "Pod")


def _managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}


def _created(obj: dict[str, Any], manager: str, schema: Schema = UNKNOWN) -> dict[str, Any]:
    # A create by an ordinary write, as the REST layer records it.
    out = copy.deepcopy(obj)
    out["metadata"]["managedFields"] = record_update(None, out, manager, T0, schema=schema)
    return out


def test_apply_creates_and_records_the_documented_entry() -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
        "data": {"key": "some value"},
    }
    created = apply(None, config, "kubectl", False, T1, schema=builtin_schema("", "ConfigMap"))
    assert created["data"] == {"key": "some value"}
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}},
        }
    ]


DEPLOYMENT = {
    "apiVersion": "v1",
    "kind": "Thing",
    "metadata": {"name": "d", "namespace": "default"},
    "spec": {"replicas": 3, "paused": False},
}


def test_conflict_with_a_client_side_apply_manager_is_worded_as_upstream() -> None:
    live = _created(DEPLOYMENT, "kubectl-client-side-apply")
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 2}}
    with pytest.raises(StatusError) as caught:
        apply(live, config, "kubectl", False, T1)
    err = caught.value
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: '
        ".spec.replicas"
    )
    assert err.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-client-side-apply" using v1',
                "field": ".spec.replicas",
            }
        ]
    }


def test_several_conflicts_are_listed_by_manager() -> None:
    live = _created(DEPLOYMENT, "kubectl-client-side-apply")
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 2, "paused": True}}
    with pytest.raises(StatusError) as caught:
        apply(live, config, "kubectl", False, T1)
    assert caught.value.message == (
        "Apply failed with 2 conflicts: conflicts with "
        '"kubectl-client-side-apply" using v1:\n- .spec.paused\n- .spec.replicas'
    )


def test_force_takes_ownership() -> None:
    live = _created(DEPLOYMENT, "kubectl-client-side-apply")
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 2}}
    out = apply(live, config, "kubectl", True, T1)
    assert out["spec"] == {"replicas": 2, "paused": False}
    managers = _managers(out)
    assert managers["kubectl", "Apply"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    # A custom resource's create owns `spec` itself too (no typed zero object holds it).
    assert managers["kubectl-client-side-apply", "Update"]["fieldsV1"] == {
        "f:spec": {".": {}, "f:paused": {}}
    }


def test_same_value_is_shared_without_conflict() -> None:
    live = _created(DEPLOYMENT, "kubectl-client-side-apply")
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 3}}
    out = apply(live, config, "kubectl", False, T1)
    managers = _managers(out)
    assert managers["kubectl", "Apply"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert managers["kubectl-client-side-apply", "Update"]["fieldsV1"] == {
        "f:spec": {".": {}, "f:paused": {}, "f:replicas": {}}
    }


def test_two_appliers_conflict_and_no_op_apply_keeps_time() -> None:
    first = apply(None, DEPLOYMENT, "a", False, T0)
    again = apply(first, DEPLOYMENT, "a", False, T1)
    assert _managers(again)["a", "Apply"]["time"] == T0
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 5}}
    with pytest.raises(StatusError, match=r'^Apply failed with 1 conflict: conflict with "a": '):
        apply(first, config, "b", False, T1)


def test_fields_no_longer_applied_are_removed_unless_owned_elsewhere() -> None:
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "containers": [{"name": "c", "image": "i"}, {"name": "d", "image": "j"}],
        },
    }
    live = apply(None, config, "mgr", False, T0, schema=POD_SCHEMA)
    # Someone else also sets label b by an ordinary update.
    updated = copy.deepcopy(live)
    updated["metadata"]["labels"]["b"] = "3"
    updated["metadata"]["managedFields"] = record_update(
        live, updated, "other", T1, schema=POD_SCHEMA
    )
    smaller = copy.deepcopy(config)
    smaller["metadata"]["labels"] = {"a": "1"}
    smaller["spec"]["containers"] = [{"name": "c", "image": "i"}]
    out = apply(updated, smaller, "mgr", False, T2, schema=POD_SCHEMA)
    assert out["metadata"]["labels"] == {"a": "1", "b": "3"}
    assert out["spec"]["containers"] == [{"name": "c", "image": "i"}]


def test_unowned_fields_the_applier_never_set_survive_its_reapply() -> None:
    config = {"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "x"}, "spec": {"a": 1}}
    live = apply(None, config, "mgr", False, T0)
    live["spec"]["generated"] = "by the server"  # e.g. defaulting: nobody owns it
    out = apply(live, {**config, "spec": {"a": 2}}, "mgr", False, T1)
    assert out["spec"] == {"a": 2, "generated": "by the server"}


def test_update_takes_fields_from_an_applier() -> None:
    live = apply(None, DEPLOYMENT, "kubectl", False, T0)
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 9
    entries = record_update(live, new, "hpa", T1)
    by = {(e["manager"], e["operation"]): e for e in entries}
    assert by["hpa", "Update"]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert by["kubectl", "Apply"]["fieldsV1"] == {"f:spec": {"f:paused": {}}}
    assert [e["operation"] for e in entries] == ["Apply", "Update"]


def test_update_without_changes_leaves_entries_alone() -> None:
    live = _created(DEPLOYMENT, "creator")
    assert (
        record_update(live, copy.deepcopy(live), "other", T1) == live["metadata"]["managedFields"]
    )


def test_update_may_reset_managed_fields_with_an_empty_list() -> None:
    live = _created(DEPLOYMENT, "creator")
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = []
    assert record_update(live, new, "other", T1) == []


def test_create_owns_new_maps_but_not_the_kinds_struct_fields() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always"},
    }
    entries = record_update(None, pod, "kubectl-create", T0, schema=POD_SCHEMA)
    fields = entries[0]["fieldsV1"]
    assert fields["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert "." not in fields["f:spec"]
    assert fields["f:spec"]["f:restartPolicy"] == {}


def test_apply_refuses_managed_fields_and_keyless_items() -> None:
    with pytest.raises(StatusError) as caught:
        apply(None, {**DEPLOYMENT, "metadata": {"name": "d", "managedFields": []}}, "m", False, T0)
    assert (caught.value.code, caught.value.message) == (400, "metadata.managedFields must be nil")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"image": "i"}]},
    }
    with pytest.raises(StatusError) as caught:
        apply(None, pod, "m", False, T0, schema=POD_SCHEMA)
    assert caught.value.code == 500
    assert caught.value.message == (
        "failed to create typed patch object (ns/p; /v1, Kind=Pod): .spec.containers: element 0: "
        'associative list with keys has an element that omits key field "name" '
        "(and doesn't have default value)"
    )


def test_update_managers_are_capped_into_ancient_changes() -> None:
    obj = _created({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "x"}}, "m0")
    for i in range(MAX_UPDATE_MANAGERS + 2):
        new = copy.deepcopy(obj)
        new.setdefault("data", {})[f"k{i}"] = "v"
        new["metadata"]["managedFields"] = record_update(obj, new, f"m{i}", f"2024-02-{i + 1:02d}")
        obj = new
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == MAX_UPDATE_MANAGERS
    assert ANCIENT_CHANGES in managers
    assert f"m{MAX_UPDATE_MANAGERS + 1}" in managers


@dataclass(frozen=True)
class MergeCase:
    name: str
    live: Any
    config: Any
    expected: Any


SET_AND_MAP = Schema(
    fields={
        "s": Schema(list_type="set"),
        "m": Schema(list_type="map", map_keys=("k",)),
        "a": Schema(list_type="atomic"),
    }
)
MERGES = [
    MergeCase("atomic list replaced", {"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
    MergeCase(
        "set union keeps live-only items", {"s": ["a", "b"]}, {"s": ["c"]}, {"s": ["a", "b", "c"]}
    ),
    MergeCase(
        "keyed items merge",
        {"m": [{"k": 1, "x": 1}, {"k": 2, "x": 2}]},
        {"m": [{"k": 2, "y": 3}]},
        {"m": [{"k": 1, "x": 1}, {"k": 2, "x": 2, "y": 3}]},
    ),
    MergeCase(
        "config order for shared items",
        {"s": ["a", "b", "c"]},
        {"s": ["c", "a"]},
        {"s": ["b", "c", "a"]},
    ),
    MergeCase("null clears", {"x": 1, "y": 2}, {"x": None}, {"y": 2}),
]


@pytest.mark.parametrize("case", MERGES, ids=lambda c: c.name)
def test_structured_merge(case: MergeCase) -> None:
    assert merge(case.live, case.config, SET_AND_MAP) == case.expected


def test_path_strings_as_conflicts_print_them() -> None:
    schema = Schema(
        fields={
            "m": Schema(list_type="map", map_keys=("name", "port")),
            "s": Schema(list_type="set"),
        }
    )
    fields = to_field_set({"m": [{"name": "a", "port": 80}], "s": ["x"]}, schema)
    assert sorted(path_string(p) for p in fields) == [
        '.m[name="a",port=80]',
        '.m[name="a",port=80].name',
        '.m[name="a",port=80].port',
        '.s[="x"]',
    ]


_JSON = st.recursive(
    st.one_of(st.integers(-3, 3), st.text(max_size=2), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text("ab", max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)
_OBJECTS = st.fixed_dictionaries(
    {"s": st.lists(st.text("xyz", max_size=2), max_size=4, unique=True)},
    optional={"o": st.dictionaries(st.text("ab", max_size=2), _JSON, max_size=3)},
)


@given(_OBJECTS)
def test_fields_v1_round_trips(obj: dict[str, Any]) -> None:
    fields = to_field_set(obj, SET_AND_MAP)
    assert from_fields_v1(to_fields_v1(fields)) == fields


@given(_OBJECTS, _OBJECTS)
def test_compare_and_merge_laws(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert compare(a, a, SET_AND_MAP) == (frozenset(), frozenset(), frozenset())
    assert merge(a, a, SET_AND_MAP) == a
    added, _, removed = compare(a, b, SET_AND_MAP)
    assert not (added & removed)
    assert added <= to_field_set(b, SET_AND_MAP) | {p[:i] for p in added for i in range(1, len(p))}
