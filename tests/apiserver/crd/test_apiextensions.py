"""The CustomResourceDefinition object: defaulting, validation messages, status."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.crd import crd_status, default_crd, validate_crd

from .helpers import widget_crd

NOW = "2024-01-01T00:00:00Z"
LATER = "2024-01-02T00:00:00Z"


def test_valid_fixture_has_no_errors() -> None:
    crd = widget_crd()
    default_crd(crd)
    assert validate_crd(crd) == []


def test_defaulting_fills_names_and_conversion() -> None:
    crd = widget_crd()
    del crd["spec"]["names"]["singular"]
    del crd["spec"]["names"]["listKind"]
    default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "widget"
    assert crd["spec"]["names"]["listKind"] == "WidgetList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_undefaulted_names_are_accepted() -> None:
    crd = widget_crd()
    del crd["spec"]["names"]["singular"]
    del crd["spec"]["names"]["listKind"]
    assert validate_crd(crd) == []
    accepted = crd_status(crd, now=NOW)["acceptedNames"]
    assert (accepted["singular"], accepted["listKind"]) == ("widget", "WidgetList")


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(crd: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = crd
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


@dataclass(frozen=True)
class Case:
    name: str
    change: Callable[[dict[str, Any]], None]
    errors: tuple[str, ...]


CASES = [
    Case(
        "name must be plural.group",
        _set("metadata.name", "gadgets.example.com"),
        (
            'metadata.name: Invalid value: "gadgets.example.com": must be '
            'spec.names.plural+"."+spec.group',
        ),
    ),
    Case(
        "group needs a dot",
        lambda c: c["spec"].update(group="example") or c["metadata"].update(name="widgets.example"),
        ('spec.group: Invalid value: "example": should be a domain with at least one dot',),
    ),
    Case(
        "scope",
        _set("spec.scope", "Global"),
        ('spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',),
    ),
    Case(
        "two storage versions",
        _set("spec.versions.1.storage", True),
        (
            'spec.versions: Invalid value: "[\\"v1\\", \\"v1beta1\\", \\"v1alpha1\\"]": must have '
            "exactly one version marked as storage version",
        ),
    ),
    Case(
        "version name",
        _set("spec.versions.2.name", "V2"),
        (
            'spec.versions[2].name: Invalid value: "V2": a DNS-1035 label must consist of lower '
            "case alphanumeric characters or '-', start with an alphabetic character, and end "
            "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
            "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
    ),
    Case(
        "schema required",
        _set("spec.versions.2.schema", {}),
        ("spec.versions[2].schema.openAPIV3Schema: Required value: schemas are required",),
    ),
    Case(
        "schema not structural",
        _set("spec.versions.2.schema.openAPIV3Schema.properties", {"spec": {"description": "x"}}),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[spec].type: Required value: must "
            "not be empty for specified object fields",
        ),
    ),
    Case(
        "rule does not compile",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.x-kubernetes-validations",
            [{"rule": "self.a =="}],
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid "
            'value: "self.a ==": compilation failed',
        ),
    ),
    Case(
        "rule on an undeclared field",
        _set(
            "spec.versions.0.schema.openAPIV3Schema.properties.spec.x-kubernetes-validations.0",
            {"rule": "self.colour == 'red'"},
        ),
        (
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"
            ".rule: Invalid value: \"self.colour == 'red'\": compilation failed: ERROR: "
            "<input>:1:5: undefined field 'colour'",
        ),
    ),
    Case(
        "map list key neither required nor defaulted",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {
                "l": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                }
            },
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[l].items.properties[k].default: "
            "Required value: this property is in x-kubernetes-list-map-keys, so it must have a "
            "default or be a required property",
        ),
    ),
    Case(
        "set of granular objects",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {
                "s": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                }
            },
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[s].items.x-kubernetes-map-type: "
            "Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set",
        ),
    ),
    Case(
        "transition rule inside an atomic list",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {
                "l": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                    },
                }
            },
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[l].items.x-kubernetes-"
            'validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the '
            "uncorrelatable portion of the schema within "
            "spec.versions[2].schema.openAPIV3Schema.properties[l].items",
        ),
    ),
    Case(
        "bad default",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {"n": {"type": "integer", "default": "x"}},
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[n].default: Invalid value: "
            '"string": spec.versions[2].schema.openAPIV3Schema.properties[n].default in body '
            'must be of type integer: "string"',
        ),
    ),
    Case(
        "printer column type",
        _set("spec.versions.0.additionalPrinterColumns.0.type", "float"),
        (
            'spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "float": '
            'supported values: "boolean", "date", "integer", "number", "string"',
        ),
    ),
    Case(
        "printer column path outside the JSONPath subset",
        _set("spec.versions.0.additionalPrinterColumns.0.jsonPath", ".spec.a[x]"),
        (
            "spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "
            '".spec.a[x]": must be a valid JSON path: unsupported JSONPath element [x]',
        ),
    ),
    Case(
        "keyword of the wrong JSON type",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {"n": {"type": "string", "maxLength": "5"}},
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[n].maxLength: Invalid value: "
            '"5": must be a non-negative integer',
        ),
    ),
    Case(
        "pattern that does not compile",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {"n": {"type": "string", "pattern": "a("}},
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[n].pattern: Invalid value: "
            '"a(": must be a valid regular expression, but isn\'t',
        ),
    ),
    Case(
        "uniqueItems",
        _set(
            "spec.versions.2.schema.openAPIV3Schema.properties",
            {"l": {"type": "array", "uniqueItems": True, "items": {"type": "string"}}},
        ),
        (
            "spec.versions[2].schema.openAPIV3Schema.properties[l].uniqueItems: Forbidden: "
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ),
    ),
    Case(
        "kind and listKind",
        _set("spec.names.listKind", "Widget"),
        ('spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_validate_crd(case: Case) -> None:
    crd = widget_crd()
    case.change(crd)
    default_crd(crd)
    errors = [str(e) for e in validate_crd(crd)]
    # A compilation error's text is cel-python's; the field and prefix are upstream's.
    assert [e[: len(x)] for e, x in zip(errors, case.errors, strict=False)] == list(case.errors)
    assert len(errors) == len(case.errors)


def test_update_immutables() -> None:
    old = widget_crd()
    default_crd(old)
    old["status"] = crd_status(old, now=NOW)
    new = widget_crd()
    default_crd(new)
    new["spec"]["scope"] = "Cluster"
    new["spec"]["names"]["plural"] = "gizmos"
    new["metadata"]["name"] = "gizmos.example.com"
    new["status"] = old["status"]
    assert [str(e) for e in validate_crd(new, old)] == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.plural: Invalid value: "gizmos": field is immutable',
    ]


def test_status_established() -> None:
    crd = widget_crd()
    default_crd(crd)
    status = crd_status(crd, now=NOW)
    assert status["acceptedNames"] == crd["spec"]["names"]
    assert status["storedVersions"] == ["v1"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
        ("Established", "True", "InitialNamesAccepted", "the initial names have been accepted"),
    ]
    crd["status"] = status
    again = crd_status(crd, now=LATER)
    assert [c["lastTransitionTime"] for c in again["conditions"]] == [NOW, NOW]


def test_status_keeps_stored_versions_when_storage_moves() -> None:
    crd = widget_crd()
    crd["status"] = {"storedVersions": ["v1"]}
    crd["spec"]["versions"][0]["storage"] = False
    crd["spec"]["versions"][1]["storage"] = True
    assert crd_status(crd, now=NOW)["storedVersions"] == ["v1", "v1beta1"]


def test_status_name_conflict() -> None:
    crd = widget_crd()
    other = widget_crd()
    other["metadata"]["name"] = "widgets2.example.com"
    status = crd_status(crd, now=NOW, others=[other])
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("NamesAccepted", "False", "NameConflict", '"widgets" is already in use'),
        ("Established", "False", "NotAccepted", "not all names are accepted"),
    ]


def test_stored_version_must_appear() -> None:
    crd = widget_crd()
    default_crd(crd)
    crd["status"] = {"storedVersions": ["v1", "v0"]}
    assert [str(e) for e in validate_crd(crd)] == [
        'status.storedVersions[1]: Invalid value: "v0": must appear in spec.versions'
    ]
