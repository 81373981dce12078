"""Patch, as kube-apiserver's patch handler does it: JSON patch, JSON merge patch, strategic
merge patch (built-in kinds only) and server-side apply (which creates a missing object), each
applied to the latest object and then written as an update; a conflict is retried when the
patch itself names no resourceVersion."""

from __future__ import annotations

import dataclasses
import importlib
import json
from typing import Any, Final

import yaml

from numaplane.apiserver import errors
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    RestResult,
    as_served,
    clone,
    meta,
    now_rfc3339,
    object_key,
    unknown_field_outcome,
)
from numaplane.apiserver.rest_write import WriteVerbs

JSON_PATCH: Final = "application/json-patch+json"
MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_PATCH: Final = "application/strategic-merge-patch+json"
APPLY_PATCH: Final = "application/apply-patch+yaml"
#: How many times a patch without a resourceVersion is re-applied after a concurrent write.
PATCH_RETRIES: Final = 16


def _unsupported(types: list[str], got: str) -> errors.StatusError:
    return errors.StatusError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(types)
        + (f'; got "{got}"' if got else ""),
    )


def _decode(patch_type: str, body: bytes) -> Any:
    try:
        if patch_type == APPLY_PATCH:
            return yaml.safe_load(body.decode("utf-8"))
        return json.loads(body)
    except (ValueError, yaml.YAMLError) as error:
        raise errors.bad_request(f"error decoding patch: {error}") from None


def _names_resource_version(patch_type: str, doc: Any) -> bool:
    """Whether the patch sets ``metadata.resourceVersion`` (then a conflict is the client's)."""
    if patch_type == JSON_PATCH:
        return isinstance(doc, list) and any(
            isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion" for op in doc
        )
    return isinstance(doc, dict) and bool((doc.get("metadata") or {}).get("resourceVersion"))


def _lib(name: str) -> Any:
    return importlib.import_module(f"numaplane.apiserver.{name}")


class PatchVerbs(WriteVerbs):
    """``patch`` of one cluster."""

    async def patch(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        name: str,
        patch_type: str,
        body: bytes,
        subresource: str = "",
        force: bool = False,
    ) -> RestResult:
        """Apply ``body`` (of Content-Type ``patch_type``) to ``name`` and store the result; an
        apply patch creates the object when it does not exist (201)."""
        if "patch" not in info.verbs:
            raise errors.method_not_supported(info.group_resource, "patch")
        builtin = self.registry.is_builtin(info)
        supported = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
        if builtin:
            supported.append(STRATEGIC_PATCH)
        if patch_type not in supported:
            raise _unsupported(supported, patch_type)
        if patch_type == APPLY_PATCH and not ctx.field_manager:
            raise errors.invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [errors.required("fieldManager", "is required for apply patch")],
            )
        if patch_type != APPLY_PATCH and force:
            raise errors.invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [errors.forbidden_field("force", "may not be specified for non-apply patch")],
            )
        doc = _decode(patch_type, body)
        if patch_type in (MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH) and not isinstance(doc, dict):
            raise errors.bad_request("error decoding patch: the patch is not a JSON object")
        pinned = _names_resource_version(patch_type, doc)
        key = object_key(info, namespace, name)
        for _ in range(PATCH_RETRIES):
            old = self.store.get_latest(key)
            if old is None:
                if patch_type != APPLY_PATCH or subresource:
                    raise errors.not_found(info.group_resource, name)
                return await self._apply_create(ctx, info, namespace, name, doc, force)
            current = clone(as_served(old, info))
            patched = self._patched(ctx, info, patch_type, current, doc, force)
            if not isinstance(patched, dict):
                raise errors.bad_request("the patch does not result in an object")
            before = set(self._unknown(info, current))
            unknown = [p for p in self._unknown(info, patched) if p not in before]
            warnings = unknown_field_outcome(ctx, unknown)
            if (patched.get("metadata") or {}).get("name", name) != name:
                raise errors.bad_request(
                    f"the name of the object ({patched['metadata']['name']}) does not match "
                    f"the name on the URL ({name})"
                )
            meta(patched)["name"] = name
            if info.namespaced:
                meta(patched)["namespace"] = namespace
            info.strategy.default(patched)
            write_ctx = ctx
            if patch_type == APPLY_PATCH:
                write_ctx = dataclasses.replace(ctx, field_manager="")
            try:
                stored = await self._update_existing(
                    write_ctx, info, key, patched, old, subresource
                )
            except errors.StatusError as error:
                if (
                    error.reason == "Conflict"
                    and not pinned
                    and "Precondition" not in error.message
                ):
                    continue
                raise
            if stored is not None:
                return RestResult(as_served(stored, info), 200, warnings)
        raise errors.conflict(info.group_resource, name)

    def _patched(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        patch_type: str,
        current: Object,
        doc: Any,
        force: bool,
    ) -> Any:
        patching = _lib("patch")
        if patch_type == JSON_PATCH:
            return patching.json_patch(current, doc)
        if patch_type == MERGE_PATCH:
            return patching.merge_patch(current, doc)
        if patch_type == STRATEGIC_PATCH:
            return patching.strategic_merge_patch(current, doc, (info.group, info.kind))
        return _lib("apply").apply(current, doc, ctx.field_manager, force, now_rfc3339())

    async def _apply_create(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        name: str,
        doc: Object,
        force: bool,
    ) -> RestResult:
        """Server-side apply of a missing object: the applied configuration, created."""
        obj = _lib("apply").apply(None, clone(doc), ctx.field_manager, force, now_rfc3339())
        metadata = meta(obj)
        if metadata.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({metadata['name']}) does not match the name on the "
                f"URL ({name})"
            )
        metadata["name"] = name
        result = await self.create(dataclasses.replace(ctx, field_manager=""), info, namespace, obj)
        return result
