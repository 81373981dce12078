"""CRD versions as served resources: pruning, defaulting, strategies, printer columns."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from numaplane.apiserver.crd import crd_resource_infos
from numaplane.apiserver.crd.pruning import prune
from numaplane.apiserver.crd.schema import parse

from .helpers import widget, widget_crd, widget_info


def test_one_info_per_served_version() -> None:
    infos = crd_resource_infos(widget_crd())
    assert [(i.version, i.storage_version) for i in infos] == [("v1", "v1"), ("v1beta1", "v1")]
    v1 = infos[0]
    assert (v1.group, v1.resource, v1.kind, v1.singular_name) == (
        "example.com",
        "widgets",
        "Widget",
        "widget",
    )
    assert v1.namespaced
    assert v1.short_names == ("wd",)
    assert v1.categories == ("all",)
    assert v1.subresources == ("status", "scale")
    assert v1.status_strategy is not None
    assert v1.extra["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
    }
    assert infos[1].subresources == ()
    assert infos[1].status_strategy is None


def test_prune_reports_unknown_fields() -> None:
    obj = widget(bogus=1, ports=[{"name": "a", "port": 1, "junk": True}])
    obj["metadata"]["nonsense"] = "x"
    obj["topLevel"] = {}
    obj["spec"]["extra"] = {"anything": {"deep": 1}, "known": {"a": "x", "b": "pruned"}}
    obj["spec"]["template"] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "bad": 1},
        "spec": {"kept": True},
    }
    pruned = widget_info().extra["prune"](obj)
    assert pruned == [
        "metadata.nonsense",
        "spec.bogus",
        "spec.extra.known.b",
        "spec.ports[0].junk",
        "spec.template.metadata.bad",
        "topLevel",
    ]
    assert obj["spec"]["extra"] == {"anything": {"deep": 1}, "known": {"a": "x"}}
    assert obj["spec"]["template"]["spec"] == {"kept": True}
    assert "junk" not in obj["spec"]["ports"][0]


def test_preserve_unknown_version_prunes_nothing() -> None:
    obj = widget(anything={"x": 1})
    assert widget_info("v1beta1").extra["prune"](obj) == []
    assert obj["spec"]["anything"] == {"x": 1}


def test_prune_without_schema_for_items_keeps_scalars() -> None:
    node = parse({"type": "object", "properties": {"a": {"type": "array", "items": {}}}})
    obj: dict[str, Any] = {"a": [1, {"x": 1}]}
    assert prune(node, obj) == ["a[1].x"]


@dataclass(frozen=True)
class DefaultCase:
    name: str
    spec: dict[str, Any]
    expected: dict[str, Any]


DEFAULT_CASES = [
    DefaultCase("absent gets default", {}, {"color": "red", "replicas": 1}),
    DefaultCase("set value kept", {"replicas": 4}, {"color": "red", "replicas": 4}),
    DefaultCase("null replaced by default", {"replicas": None}, {"color": "red", "replicas": 1}),
    DefaultCase(
        "list items defaulted",
        {"ports": [{"name": "a"}, {"name": "b", "protocol": "UDP"}]},
        {
            "color": "red",
            "replicas": 1,
            "ports": [{"name": "a", "protocol": "TCP"}, {"name": "b", "protocol": "UDP"}],
        },
    ),
    DefaultCase(
        "non-nullable null without default dropped",
        {"name": None, "nullableField": None},
        {"color": "red", "replicas": 1, "nullableField": None},
    ),
]


@pytest.mark.parametrize("case", DEFAULT_CASES, ids=lambda c: c.name)
def test_default(case: DefaultCase) -> None:
    obj = widget(**case.spec)
    widget_info().strategy.default(obj)
    assert obj["spec"] == case.expected


def test_status_subresource_strategies() -> None:
    info = widget_info()
    assert info.status_strategy is not None
    created = widget()
    created["status"] = {"replicas": 5}
    info.strategy.prepare_for_create(created)
    assert "status" not in created
    assert created["metadata"]["generation"] == 1

    old = widget(replicas=1)
    old["status"] = {"replicas": 1}
    new = widget(replicas=2)
    new["status"] = {"replicas": 9}
    info.strategy.prepare_for_update(new, old)
    assert new["status"] == {"replicas": 1}
    assert info.strategy.bumps_generation(new, old)

    status_update = widget(replicas=7)
    status_update["status"] = {"replicas": 3}
    status_update["metadata"]["managedFields"] = [{"manager": "m"}]
    info.status_strategy.prepare_for_update(status_update, old)
    assert status_update["spec"] == old["spec"]
    assert status_update["status"] == {"replicas": 3}
    assert status_update["metadata"]["managedFields"] == [{"manager": "m"}]
    assert not info.status_strategy.bumps_generation(status_update, old)


def test_metadata_only_change_keeps_generation() -> None:
    info = widget_info()
    old = widget()
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    new["status"] = {"replicas": 2}
    assert not info.strategy.bumps_generation(new, old)


@dataclass(frozen=True)
class MetaCase:
    name: str
    metadata: dict[str, Any]
    errors: tuple[str, ...]


META_CASES = [
    MetaCase(
        "bad name",
        {"name": "Bad_Name", "namespace": "default"},
        (
            'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must '
            "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ),
    MetaCase(
        "no name",
        {"namespace": "default"},
        ("metadata.name: Required value: name or generateName is required",),
    ),
    MetaCase("no namespace", {"name": "w"}, ("metadata.namespace: Required value",)),
]

NOT_CHECKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object "
    "was invalid; correct the existing errors to complete validation"
)


@pytest.mark.parametrize("case", META_CASES, ids=lambda c: c.name)
def test_metadata_validation(case: MetaCase) -> None:
    obj = widget()
    obj["metadata"] = case.metadata
    errors = [str(e) for e in widget_info().strategy.validate(obj)]
    # A Required error blocks the CEL rules (upstream's hasBlockingErr), an Invalid one not.
    blocked = any("Required value" in e for e in case.errors)
    assert errors == [*case.errors, *([NOT_CHECKED] if blocked else [])]


def test_blocking_schema_error_skips_rules() -> None:
    obj = widget(replicas="x", maxReplicas=0)
    assert [str(e) for e in widget_info().strategy.validate(obj)] == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"',
        NOT_CHECKED,
    ]


def test_printer_columns() -> None:
    table = widget_info().table
    assert [c.name for c in table.columns()] == ["Name", "Replicas", "Color", "Ready", "Age"]
    obj = widget(replicas=3)
    obj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    obj["status"] = {
        "conditions": [{"type": "Other", "status": "x"}, {"type": "Ready", "status": "True"}]
    }
    now = datetime(2024, 1, 1, 3, 10, tzinfo=UTC).timestamp()
    assert table.row(obj, now) == ["w", 3, "red", "True", "3h10m"]
    del obj["status"]
    obj["metadata"]["creationTimestamp"] = "garbage"
    assert table.row(obj, now) == ["w", 3, "red", None, "<invalid>"]


def test_default_age_column() -> None:
    table = widget_info("v1beta1").table
    assert [(c.name, c.type) for c in table.columns()] == [("Name", "string"), ("Age", "date")]


def test_selectable_fields() -> None:
    fields = widget_info().field_set(widget(color="blue"))
    assert fields == {"metadata.name": "w", "metadata.namespace": "default", "spec.color": "blue"}


def test_deprecated_version_warning() -> None:
    crd = widget_crd()
    crd["spec"]["versions"][1]["deprecated"] = True
    infos = {i.version: i for i in crd_resource_infos(crd)}
    assert (
        infos["v1beta1"].extra["deprecation_warning"] == "example.com/v1beta1 Widget is deprecated"
    )
    assert infos["v1"].extra["deprecation_warning"] is None
    crd["spec"]["versions"][1]["deprecationWarning"] = "use v1"
    infos = {i.version: i for i in crd_resource_infos(crd)}
    assert infos["v1beta1"].extra["deprecation_warning"] == "use v1"


def test_unparsable_column_path_prints_empty_cells() -> None:
    crd = widget_crd()
    crd["spec"]["versions"][0]["additionalPrinterColumns"][1]["jsonPath"] = ".spec.color[x]"
    info = next(i for i in crd_resource_infos(crd) if i.version == "v1")
    assert info.table.row(widget(replicas=2), 0.0)[:3] == ["w", 2, None]
