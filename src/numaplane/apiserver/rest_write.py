"""Create and update (over 400 lines: one family of verbs and the steps they share), as
kube-apiserver's generic store (``registry/generic/registry/store.go``) and
``rest.BeforeCreate``/``BeforeUpdate`` do them: system metadata, ``generateName`` with retries,
generation, optimistic concurrency, update-as-create, the status and scale subresources, the
end of a deletion when an update removes the last finalizer, and ``dryRun``.

CRDs get the apiextensions server's extra steps (validation of the definition, its status,
serving it once Established). Pod binding and service-account tokens are in ``rest_sub``;
patches in ``rest_patch``.
"""

from __future__ import annotations

import uuid
from typing import Any

from numaplane.apiserver import errors
from numaplane.apiserver.apply import record_update
from numaplane.apiserver.crd import default_crd
from numaplane.apiserver.registry import CRD_RESOURCE
from numaplane.apiserver.resource import ResourceInfo, Strategy
from numaplane.apiserver.rest_admission import AdmissionSteps
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    RestResult,
    as_served,
    check_size,
    clone,
    for_storage,
    generate_name,
    meta,
    now_rfc3339,
    object_key,
    qualified_kind,
    resource_version,
    unknown_field_outcome,
)
from numaplane.apiserver.rest_core import CREATE_ON_UPDATE, ClusterCore
from numaplane.apiserver.rest_sub import from_scale, scale_paths, to_scale
from numaplane.apiserver.storage import ObjectKey

#: Upstream's ``maxNameGenerationCreateAttempts``: a generated name is retried this many times.
GENERATE_NAME_ATTEMPTS = 8
#: The finalizer the apiextensions server puts on a CRD so that its objects go first.
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
#: How many times an update without a resourceVersion is retried on a concurrent write.
UNCONDITIONAL_RETRIES = 16


class _RawFieldError(errors.FieldError):
    """A field error whose value is printed as Go prints it, not as JSON (``0x0``)."""

    def message(self) -> str:
        return f"Invalid value: {self.value}: {self.detail}"


def _namespace_for(info: ResourceInfo, namespace: str, obj: Object) -> None:
    """Put the request's namespace on ``obj``, refusing a different one in the body."""
    metadata = meta(obj)
    if info.namespaced:
        given = metadata.get("namespace") or ""
        if given and given != namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        metadata["namespace"] = namespace
    else:
        metadata.pop("namespace", None)


def _tracks_generation(strategy: Strategy) -> bool:
    return bool(getattr(strategy, "tracks_generation", True))


def _allows_unconditional_update(core: ClusterCore, info: ResourceInfo) -> bool:
    # Built-in strategies allow an update without a resourceVersion; custom resources do not.
    return core.registry.is_builtin(info)


def _raise_invalid(info: ResourceInfo, name: str, errs: list[errors.FieldError]) -> None:
    if errs:
        raise errors.invalid(info.group, info.kind, name, errs)


class WriteVerbs(AdmissionSteps):
    """``create`` and ``update`` of one cluster."""

    async def create(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        body: Object,
        subresource: str = "",
        name: str = "",
    ) -> RestResult:
        """Create an object of ``info`` in ``namespace`` from ``body`` (201 with the stored
        object), or answer a create on the ``subresource`` of the object ``name``
        (``pods/binding``, ``serviceaccounts/token``)."""
        if subresource:
            return await self._create_subresource(ctx, info, namespace, body, subresource, name)
        virtual = self.virtual_creates.get(info.group_resource)
        if virtual is not None:
            return RestResult(await virtual(ctx, clone(body)), 201)
        if "create" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "create")
        obj = clone(body)
        warnings = unknown_field_outcome(ctx, self._unknown(info, obj))
        _namespace_for(info, namespace, obj)
        self._refuse_terminating_crd(info, "create")
        if info.group_resource == CRD_RESOURCE:
            default_crd(obj)
        info.strategy.default(obj)
        metadata = meta(obj)
        generated = bool(metadata.get("generateName")) and not metadata.get("name")
        self._check_namespace_open(info, namespace, metadata.get("name", ""))
        self._admit(info, namespace, obj, None)
        self._prepare_create(ctx, info, obj)
        stored = await self._store_new(ctx, info, obj, generated)
        if info.group_resource == "namespaces" and not ctx.dry_run:
            await self._default_service_account(ctx, stored)
        return RestResult(as_served(stored, info), 201, warnings)

    def _prepare_create(self, ctx: RequestContext, info: ResourceInfo, obj: Object) -> None:
        """``rest.BeforeCreate``: system fields, the strategy, validation, CRD steps."""
        metadata = meta(obj)
        metadata.pop("deletionTimestamp", None)
        metadata.pop("deletionGracePeriodSeconds", None)
        metadata["uid"] = str(uuid.uuid4())
        metadata["creationTimestamp"] = now_rfc3339()
        metadata.pop("resourceVersion", None)
        if metadata.get("generateName") and not metadata.get("name"):
            metadata["name"] = generate_name(metadata["generateName"])
        info.strategy.prepare_for_create(obj)
        if _tracks_generation(info.strategy):
            metadata["generation"] = 1
        else:
            metadata.pop("generation", None)
        _raise_invalid(info, metadata.get("name", ""), info.strategy.validate(obj))
        if info.group_resource == CRD_RESOURCE:
            self._crd_status(obj)
            finalizers = metadata.setdefault("finalizers", [])
            if CRD_CLEANUP_FINALIZER not in finalizers:
                finalizers.append(CRD_CLEANUP_FINALIZER)
        self._record_managed(ctx, info, None, obj)
        for_storage(obj, info)
        check_size(obj)

    async def _store_new(
        self, ctx: RequestContext, info: ResourceInfo, obj: Object, generated: bool
    ) -> Object:
        """Write a prepared object (or not, for ``dryRun``), retrying a generated name."""
        metadata = meta(obj)
        if info.group_resource == "secrets":
            self._fill_token_secret(obj)
        if ctx.dry_run:
            return obj
        attempts = GENERATE_NAME_ATTEMPTS if generated else 1
        for attempt in range(attempts):
            key = object_key(info, metadata.get("namespace", ""), metadata["name"])
            try:
                stored = await self.store.create(key, obj)
            except errors.StatusError as error:
                if error.reason != "AlreadyExists":
                    raise
                if generated:
                    if attempt + 1 < attempts:
                        metadata["name"] = generate_name(metadata["generateName"])
                        continue
                    raise _generate_name_conflict(info, metadata["name"]) from None
                existing = self.store.get_latest(key)
                if existing is not None and existing.get("metadata", {}).get("deletionTimestamp"):
                    error.message = f"object is being deleted: {error.message}"
                raise
            self._after_write(info, stored)
            return stored
        raise AssertionError("unreachable")

    def _after_write(self, info: ResourceInfo, stored: Object) -> None:
        """Keep the registry current after a write to a CRD."""
        if info.group_resource == CRD_RESOURCE:
            self.registry.set_crd(stored)

    def _record_managed(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        old: Object | None,
        new: Object,
        subresource: str = "",
    ) -> None:
        """Record ``ctx.field_manager``'s fields in ``metadata.managedFields``."""
        if not ctx.field_manager:
            return
        meta(new)["managedFields"] = record_update(
            old,
            new,
            ctx.field_manager,
            now_rfc3339(),
            subresource=subresource,
            schema=self.registry.patch_schema(info),
        )

    async def update(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        name: str,
        body: Object,
        subresource: str = "",
    ) -> RestResult:
        """Replace ``name`` with ``body`` (its ``status`` only, for ``subresource="status"``);
        200 with the stored object, or 201 where the kind creates on update."""
        if subresource == "scale":
            return await self._update_scale(ctx, info, namespace, name, body)
        if subresource not in ("", "status") or (
            subresource == "status" and info.status_strategy is None
        ):
            shown = f"{info.group_resource}/{subresource}" if subresource else info.group_resource
            raise errors.method_not_supported(shown, "update")
        if "update" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "update")
        given = clone(body)
        body_name = given.get("metadata", {}).get("name", "")
        if body_name and body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        meta(given)["name"] = name
        warnings = unknown_field_outcome(ctx, self._unknown(info, given))
        _namespace_for(info, namespace, given)
        if info.group_resource == CRD_RESOURCE:
            default_crd(given)
        info.strategy.default(given)
        key = object_key(info, namespace, name)
        for _ in range(UNCONDITIONAL_RETRIES):
            old = self.store.get_latest(key)
            if old is None:
                if subresource or info.group_resource not in CREATE_ON_UPDATE:
                    raise errors.not_found(info.group_resource, name)
                self._check_namespace_open(info, namespace, name)
                obj = clone(given)
                self._prepare_create(ctx, info, obj)
                stored = await self._store_new(ctx, info, obj, False)
                return RestResult(as_served(stored, info), 201, warnings)
            new = clone(given)
            outcome = await self._update_existing(ctx, info, key, new, old, subresource)
            if outcome is not None:
                return RestResult(as_served(outcome, info), 200, warnings)
        raise errors.conflict(info.group_resource, name)

    async def _update_scale(
        self, ctx: RequestContext, info: ResourceInfo, namespace: str, name: str, scale: Object
    ) -> RestResult:
        """``PUT .../scale``: the Scale's replicas written into the object (an update of the
        main resource, so its generation follows), answered as the new Scale."""
        paths = scale_paths(info)
        key = object_key(info, namespace, name)
        wanted_rv = resource_version(scale)
        for _ in range(UNCONDITIONAL_RETRIES):
            old = self.store.get_latest(key)
            if old is None:
                raise errors.not_found(info.group_resource, name)
            if wanted_rv and wanted_rv != resource_version(old):
                raise errors.conflict(info.group_resource, name)
            new = from_scale(as_served(old, info), scale, paths)
            try:
                stored = await self._update_existing(ctx, info, key, new, old, "")
            except errors.StatusError as error:
                if error.reason == "Conflict" and not wanted_rv:
                    continue
                raise
            if stored is not None:
                return RestResult(to_scale(stored, paths))
        raise errors.conflict(info.group_resource, name)

    async def _update_existing(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        key: ObjectKey,
        new: Object,
        old: Object,
        subresource: str,
    ) -> Object | None:
        """One try of an update against ``old``; None when a concurrent write won and the
        update carries no resourceVersion (try again)."""
        name = key.name
        old_rv = resource_version(old)
        new_rv = resource_version(new)
        unconditional = new_rv == 0
        if unconditional:
            if not _allows_unconditional_update(self, info):
                raise errors.StatusError(
                    422,
                    "Invalid",
                    f'{info.group_resource} "{name}" is invalid: metadata.resourceVersion: '
                    "Invalid value: 0x0: must be specified for an update",
                    {
                        "name": name,
                        "group": info.group,
                        "kind": info.resource,
                        "causes": [
                            _RawFieldError(
                                "FieldValueInvalid",
                                "metadata.resourceVersion",
                                "0x0",
                                "must be specified for an update",
                            ).cause()
                        ],
                    },
                )
        elif new_rv != old_rv:
            raise errors.conflict(info.group_resource, name)
        old_meta = old.get("metadata", {})
        new_meta = meta(new)
        uid = new_meta.get("uid")
        if uid and uid != old_meta.get("uid"):
            raise errors.conflict(
                info.group_resource,
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                f"{old_meta.get('uid', '')}",
            )
        if not subresource:
            self._admit(info, key.namespace, new, old)
        self._before_update(ctx, info, new, as_served(old, info), subresource)
        new_meta["resourceVersion"] = str(old_rv)
        if new == old:
            # etcd3's GuaranteedUpdate writes nothing when the bytes do not change.
            return old
        if (
            not new_meta.get("finalizers")
            and old_meta.get("deletionTimestamp")
            and not old_meta.get("deletionGracePeriodSeconds")
            # A namespace also waits for its spec finalizers (the namespace controller's).
            and not (info.group_resource == "namespaces" and new.get("spec", {}).get("finalizers"))
        ):
            # The last finalizer is gone from an object being deleted: the update deletes it.
            if not ctx.dry_run:
                await self._delete_stored(ctx, info, key, old_rv)
            return new
        if ctx.dry_run:
            return new
        try:
            stored = await self.store.update(key, new, old_rv)
        except errors.StatusError as error:
            if error.reason == "Conflict" and unconditional:
                return None
            if error.reason == "Conflict":
                raise errors.conflict(info.group_resource, name) from None
            raise
        self._after_write(info, stored)
        return stored

    def _before_update(
        self, ctx: RequestContext, info: ResourceInfo, new: Object, old: Object, subresource: str
    ) -> None:
        """``rest.BeforeUpdate``: what an update may not change, the strategy, generation,
        validation, CRD steps and size."""
        strategy = info.strategy
        if subresource == "status" and info.status_strategy is not None:
            strategy = info.status_strategy
        old_meta: dict[str, Any] = old.get("metadata", {})
        new_meta = meta(new)
        if "generation" in old_meta:
            new_meta["generation"] = old_meta["generation"]
        else:
            new_meta.pop("generation", None)
        strategy.prepare_for_update(new, old)
        new_meta = meta(new)
        if not new_meta.get("uid"):
            new_meta["uid"] = old_meta.get("uid", "")
        for field in ("creationTimestamp", "deletionTimestamp"):
            if field in old_meta:
                new_meta[field] = old_meta[field]
            else:
                new_meta.pop(field, None)
        if "deletionGracePeriodSeconds" in old_meta and (
            "deletionGracePeriodSeconds" not in new_meta
        ):
            new_meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
        if not subresource and "generation" in old_meta and strategy.bumps_generation(new, old):
            new_meta["generation"] = int(old_meta["generation"]) + 1
        _raise_invalid(info, new_meta.get("name", ""), strategy.validate_update(new, old))
        if info.group_resource == CRD_RESOURCE and not subresource:
            self._crd_status(new)
        self._record_managed(ctx, info, old, new, subresource)
        for_storage(new, info)
        check_size(new)


def _generate_name_conflict(info: ResourceInfo, name: str) -> errors.StatusError:
    """``errors.NewGenerateNameConflict``: every generated name was taken."""
    return errors.StatusError(
        409,
        "AlreadyExists",
        f'{info.group_resource} "{name}" already exists, the server was not able to generate '
        "a unique name for the object",
        {"name": name, "group": info.group, "kind": info.resource, "retryAfterSeconds": 1},
    )


__all__ = ["WriteVerbs", "qualified_kind"]
