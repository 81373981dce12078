"""Server-side apply and managedFields: ownership, conflicts (upstream's wording), force,
removal of fields no longer applied, the bookkeeping of ordinary writes, and the fieldsV1
encoding (cases after the Kubernetes server-side apply documentation)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from numaplane.apiserver.apply import LAST_APPLIED, apply, build_last_applied, record_update
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.managedfields import ANCIENT_CHANGES, MAX_UPDATE_MANAGERS
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


DEPLOYMENT: dict[str, Any] = {
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


def test_reset_fields_are_owned_by_nobody() -> None:
    config = {**copy.deepcopy(DEPLOYMENT), "status": {"phase": "Done"}}
    out = apply(None, config, "m", False, T0, reset_fields=[("status",)])
    assert _managers(out)["m", "Apply"]["fieldsV1"] == {
        "f:spec": {"f:paused": {}, "f:replicas": {}}
    }
    status_write = copy.deepcopy(out)
    status_write["status"] = {"phase": "Running"}
    entries = record_update(
        out, status_write, "kubelet", T1, subresource="status", reset_fields=[("spec",)]
    )
    kubelet = next(e for e in entries if e["manager"] == "kubelet")
    assert kubelet["subresource"] == "status"
    assert kubelet["fieldsV1"] == {"f:status": {"f:phase": {}}}


def test_unmanaged_live_object_is_first_owned_by_before_first_apply() -> None:
    live = copy.deepcopy(DEPLOYMENT)  # written without field tracking
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 1}}
    with pytest.raises(StatusError) as caught:
        apply(live, config, "m", False, T1)
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .spec.replicas'
    )
    out = apply(live, {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 3}}, "m", False, T1)
    assert {e["manager"] for e in out["metadata"]["managedFields"]} == {"m", "before-first-apply"}


def _client_side_applied(spec: dict[str, Any]) -> dict[str, Any]:
    # What `kubectl apply` (client side) leaves: its annotation and its Update entry.
    obj = {**copy.deepcopy(DEPLOYMENT), "spec": spec}
    obj["metadata"]["annotations"] = {LAST_APPLIED: build_last_applied(obj)}
    return _created(obj, "kubectl-client-side-apply")


def test_kubectl_server_side_apply_takes_over_client_side_applied_fields() -> None:
    live = _client_side_applied({"replicas": 3, "paused": False})
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 5, "paused": False}}
    out = apply(live, config, "kubectl", False, T1)
    assert out["spec"]["replicas"] == 5
    assert out["metadata"]["annotations"][LAST_APPLIED] == build_last_applied(config)
    with pytest.raises(StatusError, match="conflict with"):
        apply(live, config, "someone-else", False, T1)


def test_kubectl_still_conflicts_outside_the_last_applied_configuration() -> None:
    live = _client_side_applied({"paused": False})
    live["spec"]["replicas"] = 3
    live["metadata"]["managedFields"] = record_update(
        _client_side_applied({"paused": False}), live, "kubectl-scale", T1
    )
    config = {**copy.deepcopy(DEPLOYMENT), "spec": {"replicas": 5, "paused": False}}
    with pytest.raises(StatusError) as caught:
        apply(live, config, "kubectl", False, T2)
    assert caught.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-scale" using v1: .spec.replicas'
    )


def test_last_applied_annotation_is_go_json() -> None:
    obj = {"kind": "K", "metadata": {"name": "a<b", "annotations": {LAST_APPLIED: "old"}}}
    assert build_last_applied(obj) == (
        '{"kind":"K","metadata":{"annotations":{},"name":"a\\u003cb"}}\n'
    )


def test_duplicate_keys_in_an_applied_configuration_are_refused() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]},
    }
    with pytest.raises(StatusError) as caught:
        apply(None, pod, "m", False, T0)  # the Pod's schema comes from its apiVersion/kind
    assert caught.value.message == (
        "failed to create typed patch object (ns/p; /v1, Kind=Pod): "
        '.spec.containers: duplicate entries for key [name="c"]'
    )


def test_custom_resource_create_owns_its_spec_node() -> None:
    # A custom resource's zero object is empty, so its create owns `spec` itself too.
    entries = record_update(None, copy.deepcopy(DEPLOYMENT), "creator", T0)
    assert entries[0]["fieldsV1"] == {"f:spec": {".": {}, "f:paused": {}, "f:replicas": {}}}


_NAMES = st.sampled_from(["a", "b", "c"])
_CONFIGS = st.fixed_dictionaries(
    {
        "apiVersion": st.just("v1"),
        "kind": st.just("Pod"),
        "metadata": st.fixed_dictionaries(
            {"name": st.just("p")},
            optional={"labels": st.dictionaries(_NAMES, _NAMES, max_size=2)},
        ),
        "spec": st.fixed_dictionaries(
            {
                "containers": st.lists(
                    st.fixed_dictionaries({"name": _NAMES, "image": _NAMES}),
                    min_size=1,
                    max_size=3,
                    unique_by=lambda c: c["name"],
                )
            },
            optional={"restartPolicy": _NAMES},
        ),
    }
)


@given(_CONFIGS, _CONFIGS)
def test_apply_is_idempotent_and_owns_exactly_its_configuration(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    live = apply(None, first, "one", False, T0)
    again = apply(live, first, "one", False, T1)
    assert again == live  # nothing changed, not even the entry's time
    moved = apply(live, second, "one", False, T2)
    # With a single manager, re-applying a different configuration leaves exactly it.
    fresh = apply(None, second, "one", False, T2)
    assert {k: v for k, v in moved.items() if k != "metadata"} == {
        k: v for k, v in fresh.items() if k != "metadata"
    }
    assert moved["metadata"].get("labels") == fresh["metadata"].get("labels")
