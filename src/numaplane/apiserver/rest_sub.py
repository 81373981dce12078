"""Subresources answered by a create: ``pods/binding`` (the scheduler's bind, as upstream's
``BindingREST``) and ``serviceaccounts/token`` (the TokenRequest API, delegated to
authentication through :class:`~numaplane.apiserver.rest_common.TokenIssuer`)."""

from __future__ import annotations

from numaplane.apiserver import errors
from numaplane.apiserver.kinds.pod import bind_pod
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import (
    Object,
    RequestContext,
    RestResult,
    clone,
    meta,
    now_rfc3339,
    object_key,
    resource_version,
)
from numaplane.apiserver.rest_core import ClusterCore


def _bind_refusal(name: str, why: str) -> errors.StatusError:
    return errors.conflict("pods/binding", name, why)


class SubresourceVerbs(ClusterCore):
    """Creates on a subresource."""

    async def _create_subresource(
        self,
        ctx: RequestContext,
        info: ResourceInfo,
        namespace: str,
        body: Object,
        subresource: str,
        name: str,
    ) -> RestResult:
        """Dispatch a create on ``info``'s ``subresource`` of the object ``name``."""
        if info.group_resource == "pods" and subresource == "binding":
            return await self._bind(ctx, namespace, name, body)
        if info.group_resource == "serviceaccounts" and subresource == "token":
            return self._token_request(info, namespace, name, body)
        raise errors.method_not_supported(f"{info.group_resource}/{subresource}", "create")

    async def _bind(
        self, ctx: RequestContext, namespace: str, url_name: str, body: Object
    ) -> RestResult:
        """Assign a pod to a node (``BindingREST``): ``spec.nodeName``, the ``PodScheduled``
        condition and the binding's annotations, refused once the pod is bound, being deleted
        or gated; the binding's uid and resourceVersion are preconditions."""
        binding = clone(body)
        metadata = meta(binding)
        name = url_name or metadata.get("name", "")
        pods = self.registry.lookup("", "v1", "pods")
        if pods is None:
            raise errors.not_found("pods", name)
        key = object_key(pods, namespace, name)
        for _ in range(16):
            pod = self.store.get_latest(key)
            if pod is None:
                raise errors.not_found("pods", name)
            pod_meta = pod.get("metadata", {})
            if metadata.get("uid") and metadata["uid"] != pod_meta.get("uid"):
                raise _bind_refusal(
                    name,
                    f"Precondition failed: UID in precondition: {metadata['uid']}, "
                    f"UID in object meta: {pod_meta.get('uid', '')}",
                )
            pinned = bool(metadata.get("resourceVersion"))
            if pinned and resource_version(binding) != resource_version(pod):
                raise _bind_refusal(name, errors.OBJECT_MODIFIED)
            bound = bind_pod(pod, binding, name)
            _stamp_pod_scheduled(pod, bound)
            if ctx.dry_run:
                break
            try:
                await self.store.update(key, bound, resource_version(pod))
                break
            except errors.StatusError as error:
                if error.reason != "Conflict" or pinned:
                    raise
        return RestResult(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "code": 201,
            },
            201,
        )

    def _token_request(
        self, info: ResourceInfo, namespace: str, name: str, body: Object
    ) -> RestResult:
        """``serviceaccounts/NAME/token``: a signed token for an existing ServiceAccount,
        issued by authentication."""
        if self.token_issuer is None:
            raise errors.method_not_supported(f"{info.group_resource}/token", "create")
        account = self.store.get_latest(object_key(info, namespace, name))
        if account is None:
            raise errors.not_found(info.group_resource, name)
        return RestResult(self.token_issuer.token_request(account, clone(body)), 201)


def _stamp_pod_scheduled(pod: Object, bound: Object) -> None:
    """``podutil.UpdatePodCondition``'s transition time: now when PodScheduled turns True,
    the old time when it already was."""
    before = {c.get("type"): c for c in (pod.get("status") or {}).get("conditions") or ()}.get(
        "PodScheduled"
    )
    for condition in bound.get("status", {}).get("conditions") or ():
        if condition.get("type") != "PodScheduled":
            continue
        if before is not None and before.get("status") == "True":
            condition["lastTransitionTime"] = before.get("lastTransitionTime")
        else:
            condition["lastTransitionTime"] = now_rfc3339()


def scale_paths(info: ResourceInfo) -> dict[str, str]:
    """The scale subresource's paths of a custom resource (404 when it has none)."""
    paths = info.extra.get("scale")
    if not isinstance(paths, dict) or "scale" not in info.subresources:
        raise errors.StatusError(
            404, "NotFound", "the server could not find the requested resource"
        )
    return paths


def _path_parts(path: str) -> list[str]:
    return [p for p in path.strip().lstrip(".").split(".") if p]


def _read_path(obj: Object, path: str) -> object:
    value: object = obj
    for part in _path_parts(path):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _write_path(obj: Object, path: str, value: object) -> None:
    parts = _path_parts(path)
    target = obj
    for part in parts[:-1]:
        child = target.get(part)
        if not isinstance(child, dict):
            child = {}
            target[part] = child
        target = child
    target[parts[-1]] = value


def to_scale(obj: Object, paths: dict[str, str]) -> Object:
    """The ``autoscaling/v1`` Scale of a custom resource, read through the CRD's scale paths
    (``specReplicasPath``, ``statusReplicasPath``, ``labelSelectorPath``)."""
    metadata = obj.get("metadata", {})
    spec_replicas = _read_path(obj, paths.get("specReplicasPath", ""))
    status_replicas = _read_path(obj, paths.get("statusReplicasPath", ""))
    scale: Object = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: metadata[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in metadata
        },
        "spec": {"replicas": spec_replicas if isinstance(spec_replicas, int) else 0},
        "status": {"replicas": status_replicas if isinstance(status_replicas, int) else 0},
    }
    selector_path = paths.get("labelSelectorPath")
    if selector_path:
        selector = _read_path(obj, selector_path)
        if isinstance(selector, str):
            scale["status"]["selector"] = selector
    return scale


def from_scale(obj: Object, scale: Object, paths: dict[str, str]) -> Object:
    """``obj`` with ``spec.replicas`` of ``scale`` written at the spec replicas path."""
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        name = scale.get("metadata", {}).get("name", "")
        raise errors.invalid(
            "autoscaling",
            "Scale",
            name,
            [errors.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    updated = clone(obj)
    _write_path(updated, paths.get("specReplicasPath", ".spec.replicas"), replicas)
    return updated
