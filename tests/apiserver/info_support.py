"""What the document tests (discovery, OpenAPI) share: resource descriptions whose write paths
are never taken, so any call into them fails the test."""

from __future__ import annotations

from typing import Any

from numaplane.apiserver.errors import FieldError
from numaplane.apiserver.resource import Object, ResourceInfo
from numaplane.apiserver.table import DefaultTablePrinter


class UnusedStrategy:
    """Documents never write objects: any call is a test failure."""

    def default(self, obj: Object) -> None:
        raise AssertionError("a document builder called a strategy")

    def prepare_for_create(self, obj: Object) -> None:
        raise AssertionError("a document builder called a strategy")

    def prepare_for_update(self, new: Object, old: Object) -> None:
        raise AssertionError("a document builder called a strategy")

    def validate(self, obj: Object) -> list[FieldError]:
        raise AssertionError("a document builder called a strategy")

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        raise AssertionError("a document builder called a strategy")

    def bumps_generation(self, new: Object, old: Object) -> bool:
        raise AssertionError("a document builder called a strategy")


def info(
    group: str, version: str, resource: str, kind: str, namespaced: bool, **kw: Any
) -> ResourceInfo:
    """A resource description for documents only (no strategy, default table, no fields)."""
    return ResourceInfo(
        group,
        version,
        resource,
        kind,
        namespaced,
        strategy=UnusedStrategy(),
        table=DefaultTablePrinter(),
        field_set=lambda obj: {},
        **kw,
    )
