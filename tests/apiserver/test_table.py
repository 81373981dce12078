"""Table responses and the Accept negotiation that asks for them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver import table
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.resource import Object, TableColumn


class AgePrinter:
    """A printer of two columns, the second priority 1 (shown with -o wide)."""

    def columns(self) -> tuple[TableColumn, ...]:
        return (
            TableColumn("Name", "string", "name", "the name"),
            TableColumn("Age", "string", "", "since creation", priority=1),
        )

    def row(self, obj: Object, now: float) -> list[Any]:
        return [obj["metadata"]["name"], f"{int(now)}s"]


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "labels": {"a": "b"}, "resourceVersion": "7"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


@dataclass(frozen=True)
class IncludeCase:
    name: str
    include_object: str
    expected: dict[str, Any] | None


@pytest.mark.parametrize(
    "case",
    [
        IncludeCase(
            "default is metadata",
            "",
            {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": POD["metadata"],
            },
        ),
        IncludeCase(
            "metadata",
            "Metadata",
            {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": POD["metadata"],
            },
        ),
        IncludeCase("object", "Object", POD),
        IncludeCase("none", "None", None),
    ],
    ids=lambda c: c.name,
)
def test_rows_carry_the_object_as_asked(case: IncludeCase) -> None:
    doc = table.build_table(
        AgePrinter(), [POD], case.include_object, {"resourceVersion": "9"}, 42.0
    )
    assert doc["kind"] == "Table"
    assert doc["apiVersion"] == "meta.k8s.io/v1"
    assert doc["metadata"] == {"resourceVersion": "9"}
    assert doc["rows"] == [{"cells": ["p", "42s"], "object": case.expected}]


def test_column_definitions_have_every_field() -> None:
    doc = table.build_table(AgePrinter(), [], "Metadata", None, 0.0)
    assert doc["metadata"] == {}
    assert doc["rows"] == []
    assert doc["columnDefinitions"] == [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": "the name",
            "priority": 0,
        },
        {
            "name": "Age",
            "type": "string",
            "format": "",
            "description": "since creation",
            "priority": 1,
        },
    ]


def test_a_single_objects_table_carries_its_resource_version() -> None:
    doc = table.build_table(AgePrinter(), [POD], "Metadata", None, 0.0)
    assert doc["metadata"] == {"resourceVersion": "7"}
    listed = table.build_table(
        AgePrinter(), [POD], "Metadata", {"resourceVersion": "9", "continue": "c"}, 0.0
    )
    assert listed["metadata"] == {"resourceVersion": "9", "continue": "c"}


def test_no_headers_leaves_column_definitions_null() -> None:
    doc = table.build_table(AgePrinter(), [POD], "None", None, 1.0, no_headers=True)
    assert doc["columnDefinitions"] is None
    assert doc["rows"] == [{"cells": ["p", "1s"], "object": None}]


def test_v1beta1_table() -> None:
    doc = table.build_table(AgePrinter(), [POD], "Metadata", None, 0.0, version="v1beta1")
    assert doc["apiVersion"] == "meta.k8s.io/v1beta1"
    assert doc["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"


def test_bad_include_object_is_a_bad_request() -> None:
    with pytest.raises(StatusError) as caught:
        table.build_table(AgePrinter(), [POD], "Everything", None, 0.0)
    assert caught.value.code == 400
    assert caught.value.message == (
        'Unable to convert to Table as requested: includeObject: Invalid value: "Everything": '
        "must be 'Metadata', 'Object', 'None', or empty"
    )


def test_default_printer_is_name_and_created_at() -> None:
    printer = table.DefaultTablePrinter()
    assert [(c.name, c.type, c.format) for c in printer.columns()] == [
        ("Name", "string", "name"),
        ("Created At", "date", ""),
    ]
    obj = {"metadata": {"name": "x", "creationTimestamp": "2024-01-01T00:00:00Z"}}
    assert printer.row(obj, 0.0) == ["x", "2024-01-01T00:00:00Z"]


@dataclass(frozen=True)
class OutputCase:
    name: str
    accept: str
    kind: str
    version: str = ""
    mime: str = "application/json"


@pytest.mark.parametrize(
    "case",
    [
        OutputCase("kubectl get", table.KUBECTL_TABLE_ACCEPT, "Table", "v1"),
        OutputCase(
            "v1beta1 table first",
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            "Table",
            "v1beta1",
        ),
        OutputCase("plain json", "application/json", "object"),
        OutputCase("empty accepts anything", "", "object"),
        OutputCase(
            "kubectl typed client", "application/vnd.kubernetes.protobuf,application/json", "object"
        ),
        OutputCase(
            "metadata only list",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
            "PartialObjectMetadataList",
            "v1",
        ),
        OutputCase(
            "table of another group falls through",
            "application/json;as=Table;v=v1;g=example.com,application/json",
            "object",
        ),
        OutputCase("yaml", "application/yaml", "object", mime="application/yaml"),
    ],
    ids=lambda c: c.name,
)
def test_negotiate_output(case: OutputCase) -> None:
    out = table.negotiate_output(case.accept)
    assert (out.kind, out.version, out.mime) == (case.kind, case.version, case.mime)


def test_nothing_acceptable_is_406() -> None:
    with pytest.raises(StatusError) as caught:
        table.negotiate_output("application/json;as=Table;v=v1;g=example.com")
    assert caught.value.code == 406
    assert caught.value.reason == "NotAcceptable"


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (table.KUBECTL_TABLE_ACCEPT, True),
        ("application/json", False),
        ("text/html", False),
    ],
)
def test_wants_table(accept: str, expected: bool) -> None:
    assert table.wants_table(accept) is expected


def test_partial_object_metadata_list() -> None:
    doc = table.partial_object_metadata_list([POD], {"resourceVersion": "3"})
    assert doc == {
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": "3"},
        "items": [
            {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": POD["metadata"],
            }
        ],
    }
