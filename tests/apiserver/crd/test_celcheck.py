"""Undeclared fields in a CRD's rules are refused at creation, as cel-go's type check does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.apiserver.crd import cel
from numaplane.apiserver.crd.celcheck import undefined_fields
from numaplane.apiserver.crd.schema import parse

ROOT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "flavors": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "my-field": {"type": "string"},
            },
        },
    },
}


@dataclass(frozen=True)
class Case:
    name: str
    rule: str
    errors: tuple[str, ...]


CASES = [
    Case("declared", "self.spec.flavors.all(f, f.name != '')", ()),
    Case("undeclared", "self.spec.nope > 0", ("ERROR: <input>:1:10: undefined field 'nope'",)),
    Case(
        "undeclared on a macro variable",
        "self.spec.flavors.exists(f, f.size == 1)",
        ("ERROR: <input>:1:30: undefined field 'size'",),
    ),
    Case("inside has()", "has(self.spec.other)", ("ERROR: <input>:1:14: undefined field 'other'",)),
    Case("map keys are open", "self.spec.labels.anything == 'x'", ()),
    Case("preserve-unknown is open", "self.spec.free.whatever.deeper == 1", ()),
    Case("escaped name", "self.spec.my__dash__field == ''", ()),
    Case(
        "root resource fields",
        "self.apiVersion != '' && self.kind != '' && self.metadata.name != ''",
        (),
    ),
    Case(
        "metadata shows name and generateName only",
        "has(self.metadata.labels)",
        ("ERROR: <input>:1:18: undefined field 'labels'",),
    ),
    Case("functions are not followed", "self.spec.flavors.map(f, f.name).all(n, n.whatever)", ()),
    Case(
        "oldSelf",
        "oldSelf.spec.gone == self.spec.gone",
        (
            "ERROR: <input>:1:13: undefined field 'gone'",
            "ERROR: <input>:1:31: undefined field 'gone'",
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_undefined_fields(case: Case) -> None:
    tree = cel.parse_rule(case.rule)
    assert undefined_fields(tree, parse(ROOT), root=True) == list(case.errors)
