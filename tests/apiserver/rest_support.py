"""What the REST tests share: a real cluster (store in ``tmp_path``, controllers running) over
minimal generic resources, so that the verbs are tested on their own rules rather than on the
built-in kinds' validation (which has its own tests), and small object builders."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from numaplane.apiserver import errors
from numaplane.apiserver.crd import crd_resource_infos
from numaplane.apiserver.resource import ResourceInfo, TableColumn
from numaplane.apiserver.rest import Cluster
from numaplane.apiserver.rest_common import RequestContext
from numaplane.apiserver.rest_core import UnknownFields, no_unknown_fields
from numaplane.apiserver.user import UserInfo

T = TypeVar("T")
Object = dict[str, Any]

CTX = RequestContext(UserInfo("admin", ("system:masters", "system:authenticated")))
DRY = RequestContext(CTX.user, dry_run=True)


class GenericStrategy:
    """The rules every kind shares (name required, ``status`` owned by the subresource when it
    has one, generation bumped by a ``spec`` change), plus a namespace's phase and finalizer."""

    def __init__(
        self, *, status: bool = False, generation: bool = True, namespace: bool = False
    ) -> None:
        self.status = status
        self.tracks_generation = generation
        self.namespace = namespace

    def default(self, obj: Object) -> None:
        """Nothing to default."""

    def prepare_for_create(self, obj: Object) -> None:
        """Drop a status the subresource owns; a namespace starts Active with its finalizer."""
        if self.status:
            obj.pop("status", None)
        if self.namespace:
            obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
            obj["status"] = {"phase": "Active"}

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Keep the old status when the subresource owns it."""
        if self.status or self.namespace:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)

    def validate(self, obj: Object) -> list[errors.FieldError]:
        """A name (or generateName), and ``spec.bad`` refused, for the error path."""
        metadata = obj.get("metadata", {})
        errs = []
        if not metadata.get("name") and not metadata.get("generateName"):
            errs.append(errors.required("metadata.name", "name or generateName is required"))
        if obj.get("spec", {}).get("bad"):
            errs.append(errors.invalid_value("spec.bad", obj["spec"]["bad"], "must be false"))
        return errs

    def validate_update(self, new: Object, old: Object) -> list[errors.FieldError]:
        """As on create."""
        return self.validate(new)

    def bumps_generation(self, new: Object, old: Object) -> bool:
        """A ``spec`` change."""
        return bool(new.get("spec") != old.get("spec"))


class StatusStrategy(GenericStrategy):
    """The status subresource: everything but ``status`` stays as it was."""

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Keep all of ``old`` but the new ``status``."""
        status = new.get("status")
        new.clear()
        new.update(copy.deepcopy(old))
        if status is not None:
            new["status"] = status

    def bumps_generation(self, new: Object, old: Object) -> bool:
        """Never."""
        return False


class NamePrinter:
    """A table with the name only."""

    def columns(self) -> tuple[TableColumn, ...]:
        """``Name``."""
        return (TableColumn("Name"),)

    def row(self, obj: Object, now: float) -> list[Any]:
        """The name."""
        return [obj.get("metadata", {}).get("name", "")]


def _fields(*paths: str) -> Callable[[Object], Mapping[str, str]]:
    def field_set(obj: Object) -> Mapping[str, str]:
        metadata = obj.get("metadata", {})
        out = {
            "metadata.name": metadata.get("name", ""),
            "metadata.namespace": metadata.get("namespace", ""),
        }
        for path in paths:
            value: Any = obj
            for part in path.split("."):
                value = value.get(part, {}) if isinstance(value, dict) else {}
            out[path] = value if isinstance(value, str) else ""
        return out

    return field_set


def _info(
    group: str,
    version: str,
    resource: str,
    kind: str,
    *,
    namespaced: bool = True,
    strategy: GenericStrategy | None = None,
    status: bool = False,
    subresources: tuple[str, ...] = (),
    fields: tuple[str, ...] = (),
) -> ResourceInfo:
    return ResourceInfo(
        group=group,
        version=version,
        resource=resource,
        kind=kind,
        namespaced=namespaced,
        strategy=strategy or GenericStrategy(status=status),
        table=NamePrinter(),
        field_set=_fields(*fields),
        subresources=subresources + (("status",) if status else ()),
        status_strategy=StatusStrategy() if status else None,
    )


NAMESPACES = _info(
    "", "v1", "namespaces", "Namespace", namespaced=False,
    strategy=GenericStrategy(namespace=True, generation=False), fields=("status.phase",),
)  # fmt: skip
CONFIGMAPS = _info("", "v1", "configmaps", "ConfigMap", strategy=GenericStrategy(generation=False))
SECRETS = _info("", "v1", "secrets", "Secret", strategy=GenericStrategy(generation=False))
SERVICEACCOUNTS = _info(
    "", "v1", "serviceaccounts", "ServiceAccount", strategy=GenericStrategy(generation=False)
)
PODS = _info(
    "", "v1", "pods", "Pod", status=True, subresources=("binding",),
    fields=("spec.nodeName", "status.phase"),
)  # fmt: skip
JOBS = _info("batch", "v1", "jobs", "Job", status=True)
NODES = _info("", "v1", "nodes", "Node", namespaced=False, status=True)
CRDS = _info(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
    namespaced=False, status=True, strategy=GenericStrategy(status=True),
)  # fmt: skip

BUILTINS = (NAMESPACES, CONFIGMAPS, SECRETS, SERVICEACCOUNTS, PODS, JOBS, NODES, CRDS)


def run_cluster(
    tmp_path: Path,
    body: Callable[[Cluster], Awaitable[T]],
    *,
    unknown_fields: UnknownFields | None = None,
    real_kinds: bool = False,
    root_ca: bytes | None = None,
) -> T:
    """Open a cluster in ``tmp_path`` over :data:`BUILTINS` (the server's own built-in kinds
    and CRD handling with ``real_kinds``; ``root_ca`` for its root CA publisher), wait for its
    controllers to settle (system namespaces), run ``body``, close it."""

    async def main() -> T:
        cluster = await Cluster.open(
            "test",
            tmp_path,
            builtins=None if real_kinds else BUILTINS,
            crd_infos=None if real_kinds else crd_resource_infos,
            unknown_fields=unknown_fields or no_unknown_fields,
            root_ca=root_ca,
        )
        try:
            await cluster.settle()
            return await body(cluster)
        finally:
            await cluster.close()

    return asyncio.run(main())


def obj(kind: str, name: str, namespace: str = "default", **fields: Any) -> Object:
    """An object of ``kind`` (core/v1 unless it is ``Job``) with ``fields`` at the top."""
    api_version = "batch/v1" if kind == "Job" else "v1"
    metadata: Object = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    out: Object = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    out.update(fields)
    return out


def owner_ref(owner: Object, *, block: bool = False) -> Object:
    """An ownerReference to ``owner`` (as stored, with its uid)."""
    ref: Object = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


async def raises(awaitable: Awaitable[Any]) -> errors.StatusError:
    """The StatusError ``awaitable`` raises (failing the test when it raises none)."""
    try:
        await awaitable
    except errors.StatusError as error:
        return error
    raise AssertionError("no StatusError raised")


def raises_now(call: Callable[[], Any]) -> errors.StatusError:
    """The StatusError ``call()`` raises."""
    try:
        call()
    except errors.StatusError as error:
        return error
    raise AssertionError("no StatusError raised")
