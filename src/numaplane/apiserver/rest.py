"""One logical cluster: its store, what it serves, the REST verbs with kube-apiserver's
semantics, and the controllers that run beside them (garbage collector, namespace lifecycle,
service accounts, CRD cleanup).

The verbs come from mixins, one module per family: ``rest_write`` (create, update),
``rest_sub`` (``pods/binding``, ``serviceaccounts/token``), ``rest_patch`` (patch and
server-side apply), ``rest_read`` (get, list, watch) and ``deletion`` (delete,
deletecollection). Each verb raises :class:`~numaplane.apiserver.errors.StatusError` with
upstream's code, reason and message; the HTTP layer renders it.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from numaplane.apiserver.crd import crd_resource_infos, validate_crd
from numaplane.apiserver.deletion import DeleteVerbs
from numaplane.apiserver.errors import FieldError
from numaplane.apiserver.garbagecollector import Controllers
from numaplane.apiserver.kinds import builtin_resources
from numaplane.apiserver.kinds.apiextensions import CRDHooks
from numaplane.apiserver.kinds.meta import name_is_dns_subdomain, validate_object_meta
from numaplane.apiserver.registry import CRD_RESOURCE, CrdInfos, Registry
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    RequestContext,
    RestResult,
    TokenIssuer,
    VirtualCreate,
)
from numaplane.apiserver.rest_core import UnknownFields, no_unknown_fields
from numaplane.apiserver.rest_patch import PatchVerbs
from numaplane.apiserver.rest_read import ReadVerbs
from numaplane.apiserver.rest_sub import SubresourceVerbs
from numaplane.apiserver.storage import ClusterStore

__all__ = ["Cluster", "RequestContext", "RestResult", "TokenIssuer", "store_path"]


def default_unknown_fields() -> UnknownFields:
    """The unknown-field finder of built-in kinds from their OpenAPI schemas
    (``numaplane.apiserver.openapi_fields``), or none where that module is not installed."""
    try:
        module = importlib.import_module("numaplane.apiserver.openapi_fields")
    except ImportError:
        return no_unknown_fields
    finder: UnknownFields = module.unknown_fields
    return finder


def store_path(data_dir: Path, name: str) -> Path:
    """Where the cluster ``name`` keeps its SQLite database inside ``data_dir``."""
    return data_dir / "clusters" / name / "store.db"


def default_builtins() -> list[ResourceInfo]:
    """The built-in resources, CustomResourceDefinitions validated by the crd package."""
    return list(builtin_resources(CRDHooks(validate=validate_crd)))


def _custom_resource_meta(obj: dict[str, Any], namespaced: bool) -> list[FieldError]:
    return validate_object_meta(obj, namespaced, name_is_dns_subdomain)


def default_crd_infos(crd: dict[str, Any]) -> list[ResourceInfo]:
    """``crd``'s served resources, their object metadata validated as built-in kinds' are."""
    return crd_resource_infos(crd, meta_validator=_custom_resource_meta)


class Cluster(SubresourceVerbs, PatchVerbs, ReadVerbs, DeleteVerbs):
    """One logical cluster: ``name``, ``store``, ``registry`` and the verbs over them.

    Open with :meth:`open`; :meth:`close` stops the controllers and closes the store.
    """

    def __init__(
        self,
        name: str,
        store: ClusterStore,
        registry: Registry,
        *,
        token_issuer: TokenIssuer | None = None,
        unknown_fields: UnknownFields | None = None,
        root_ca: bytes | None = None,
    ) -> None:
        self.name = name
        self.store = store
        self.registry = registry
        self.token_issuer = token_issuer
        self.virtual_creates: dict[str, VirtualCreate] = {}
        self.unknown_fields = unknown_fields or default_unknown_fields()
        self.controllers = Controllers(self, root_ca)

    @classmethod
    async def open(
        cls,
        name: str,
        data_dir: Path,
        *,
        token_issuer: TokenIssuer | None = None,
        builtins: Sequence[ResourceInfo] | None = None,
        crd_infos: CrdInfos | None = None,
        unknown_fields: UnknownFields | None = None,
        compact_interval_s: float = 300.0,
        controllers: bool = True,
        root_ca: bytes | None = None,
    ) -> Cluster:
        """Open (creating on first start) the cluster ``name`` in ``data_dir``: its store,
        the resources it serves (``builtins`` default to the built-in kinds, plus its stored
        Established CRDs), then its controllers, which create the system namespaces (and, with
        ``root_ca``, the PEM CA bundle, publish it in every namespace)."""
        path = store_path(data_dir, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        store = await ClusterStore.open(path, compact_interval_s=compact_interval_s)
        registry = Registry(
            default_builtins() if builtins is None else builtins,
            default_crd_infos if crd_infos is None else crd_infos,
        )
        registry.load_crds(store.list(CRD_RESOURCE)[0])
        cluster = cls(
            name,
            store,
            registry,
            token_issuer=token_issuer,
            unknown_fields=unknown_fields,
            root_ca=root_ca,
        )
        if controllers:
            await cluster.controllers.start()
        return cluster

    async def settle(self) -> None:
        """Wait until the controllers have caught up with every write so far."""
        await self.controllers.settle()

    async def close(self) -> None:
        """Stop the controllers and close the store."""
        await self.controllers.stop()
        await self.store.close()
