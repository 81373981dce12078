"""apiextensions.k8s.io/v1 CustomResourceDefinition as a served kind
(``apiextensions-apiserver/pkg/registry/customresourcedefinition``).

What makes a definition valid (names, scope, versions, structural schemas) and its status
conditions belong to ``numaplane.apiserver.crd``; this module only frames the kind. The REST
layer passes the crd package's functions in as :class:`CRDHooks` (see
:func:`crd_resource_info`), so this package never imports that one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from numaplane.apiserver.errors import FieldError
from numaplane.apiserver.kinds.meta import as_dict, as_list, as_str, name_is_dns_subdomain
from numaplane.apiserver.kinds.printing import DEFAULT_PRINTER, cluster_fields
from numaplane.apiserver.kinds.strategy import KindStrategy, StatusStrategy
from numaplane.apiserver.resource import ResourceInfo

Object = dict[str, Any]
CRDValidator = Callable[[Object, Object | None], list[FieldError]]
CRDStatus = Callable[[Object], Object]


def _no_definition_errors(crd: Object, old: Object | None) -> list[FieldError]:
    return []


def _keep_status(crd: Object) -> Object:
    return as_dict(crd.get("status"))


@dataclass(frozen=True)
class CRDHooks:
    """The crd package's rules: ``validate(crd, old)`` (``old`` None on create) and
    ``status(crd)`` (the status a definition should have: conditions, acceptedNames,
    storedVersions). The defaults check nothing and keep the status as it is."""

    validate: CRDValidator = _no_definition_errors
    status: CRDStatus = _keep_status


def storage_version(crd: Object) -> str:
    """The version marked ``storage: true`` (empty if none)."""
    for version in as_list(as_dict(crd.get("spec")).get("versions")):
        if as_dict(version).get("storage") is True:
            return as_str(as_dict(version).get("name"))
    return ""


def _add_stored_version(crd: Object) -> None:
    stored = storage_version(crd)
    status = crd.setdefault("status", {})
    versions = status.get("storedVersions")
    if not isinstance(versions, list):
        versions = status["storedVersions"] = []
    if stored and stored not in versions:
        versions.append(stored)


@dataclass(frozen=True)
class _CRDFunctions:
    hooks: CRDHooks = field(default_factory=CRDHooks)

    def prepare_create(self, crd: Object) -> None:
        # Status starts empty but for the storage version (upstream's PrepareForCreate); the
        # crd package then says what conditions and accepted names it has.
        crd["status"] = {}
        _add_stored_version(crd)
        crd["status"] = self.hooks.status(crd)

    def prepare_update(self, new: Object, old: Object) -> None:
        # The main resource keeps the stored status, records a new storage version, and the
        # conditions follow the new spec.
        _add_stored_version(new)
        new["status"] = self.hooks.status(new)

    def validate(self, crd: Object) -> list[FieldError]:
        return self.hooks.validate(crd, None)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return self.hooks.validate(new, old)


def crd_strategies(hooks: CRDHooks | None = None) -> tuple[KindStrategy, StatusStrategy]:
    """The main and status strategies of CustomResourceDefinitions with ``hooks``."""
    functions = _CRDFunctions(hooks or CRDHooks())
    main = KindStrategy(
        namespaced=False,
        name_rule=name_is_dns_subdomain,
        create_preparer=functions.prepare_create,
        update_preparer=functions.prepare_update,
        validator=functions.validate,
        update_validator=functions.validate_update,
        status_key="status",
        tracks_generation=True,
        kube_finalizers=False,
    )
    status = StatusStrategy(
        main,
        functions.validate_update,
        keep_meta=("labels", "annotations", "finalizers", "ownerReferences"),
    )
    return main, status


def crd_resource_info(hooks: CRDHooks | None = None) -> ResourceInfo:
    """The served ``customresourcedefinitions`` resource, validating through ``hooks``."""
    main, status = crd_strategies(hooks)
    return ResourceInfo(
        group="apiextensions.k8s.io",
        version="v1",
        resource="customresourcedefinitions",
        kind="CustomResourceDefinition",
        namespaced=False,
        strategy=main,
        table=DEFAULT_PRINTER,
        field_set=cluster_fields,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        subresources=("status",),
        status_strategy=status,
        storage_version="v1",
    )


CRD_RESOURCE: Final = crd_resource_info()
