"""Patch, as kube-apiserver's patch handler does it: JSON patch, JSON merge patch, strategic
merge patch (built-in kinds only) and server-side apply (which creates a missing object), each
applied to the latest object and then written as an update; a conflict is retried when the
patch itself names no resourceVersion."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Final

import yaml

from numaplane.apiserver import errors
from numaplane.apiserver.apply import apply
from numaplane.apiserver.patch import json_patch, merge_patch, strategic_merge_patch
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
from numaplane.apiserver.rest_sub import scale_paths, to_scale
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
    """The patch document; a JSON body that does not decode is left to the patch functions,
    which answer with upstream's words."""
    try:
        if patch_type == APPLY_PATCH:
            return yaml.safe_load(body.decode("utf-8"))
        return json.loads(body)
    except (ValueError, yaml.YAMLError) as error:
        if patch_type == APPLY_PATCH:
            raise errors.bad_request(f"error decoding YAML: {error}") from None
        return None


def _names_resource_version(patch_type: str, doc: Any) -> bool:
    """Whether the patch sets ``metadata.resourceVersion`` (then a conflict is the client's)."""
    if patch_type == JSON_PATCH:
        return isinstance(doc, list) and any(
            isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion" for op in doc
        )
    return isinstance(doc, dict) and bool((doc.get("metadata") or {}).get("resourceVersion"))


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
        if builtin or subresource == "scale":
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
        if patch_type == APPLY_PATCH and not isinstance(doc, dict):
            raise errors.bad_request(
                "error decoding YAML: the applied configuration is not an object"
            )
        pinned = _names_resource_version(patch_type, doc)
        key = object_key(info, namespace, name)
        for _ in range(PATCH_RETRIES):
            old = self.store.get_latest(key)
            if old is None:
                if patch_type != APPLY_PATCH or subresource:
                    raise errors.not_found(info.group_resource, name)
                return await self._apply_create(ctx, info, namespace, name, doc, force)
            if subresource == "scale":
                scale = to_scale(old, scale_paths(info))
                patched_scale = self._patched(ctx, info, patch_type, scale, body, doc, force)
                meta(patched_scale)["resourceVersion"] = scale["metadata"]["resourceVersion"]
                try:
                    return await self._update_scale(ctx, info, namespace, name, patched_scale)
                except errors.StatusError as error:
                    if error.reason == "Conflict" and not pinned:
                        continue
                    raise
            current = clone(as_served(old, info))
            # Taken before the patch, which may then use ``current`` up (a merge patch does).
            before = set(self._unknown(info, current))
            patched = self._patched(
                ctx, info, patch_type, current, body, doc, force, subresource, consume=True
            )
            if not isinstance(patched, dict):
                raise errors.bad_request("the patch does not result in an object")
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
            if ctx.admit_patch is not None:
                ctx.admit_patch(patched, old)
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
        body: bytes,
        doc: Any,
        force: bool,
        subresource: str = "",
        *,
        consume: bool = False,
    ) -> Any:
        """``current`` with the patch applied (by its type); with ``consume``, a merge patch
        may change ``current`` itself (the caller has no further use for it)."""
        if patch_type == JSON_PATCH:
            return json_patch(current, body, field_validation=ctx.field_validation)
        if patch_type == MERGE_PATCH:
            return merge_patch(
                current, body, field_validation=ctx.field_validation, consume=consume
            )
        if patch_type == STRATEGIC_PATCH:
            kind_key = (info.group, info.kind)
            if current.get("apiVersion") == "autoscaling/v1" and current.get("kind") == "Scale":
                kind_key = ("autoscaling", "Scale")
            return strategic_merge_patch(current, body, kind_key)
        return apply(
            current,
            doc,
            ctx.field_manager,
            force,
            now_rfc3339(),
            schema=self.registry.patch_schema(info),
            subresource=subresource,
            reset_fields=reset_fields(info, subresource),
        )

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
        obj = apply(
            None,
            clone(doc),
            ctx.field_manager,
            force,
            now_rfc3339(),
            schema=self.registry.patch_schema(info),
            reset_fields=reset_fields(info, ""),
        )
        metadata = meta(obj)
        if metadata.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({metadata['name']}) does not match the name on the "
                f"URL ({name})"
            )
        metadata["name"] = name
        if ctx.admit_patch is not None:
            ctx.admit_patch(obj, None)
        result = await self.create(dataclasses.replace(ctx, field_manager=""), info, namespace, obj)
        return result


def reset_fields(info: ResourceInfo, subresource: str) -> list[tuple[str, ...]]:
    """The fields the endpoint's strategy resets, as upstream's ``GetResetFields``: a kind with
    a status subresource ignores ``status`` on its main resource and ``spec`` on ``/status``;
    applying them owns nothing."""
    if "status" not in info.subresources:
        return []
    return [("spec",)] if subresource == "status" else [("status",)]
