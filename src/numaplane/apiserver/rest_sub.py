"""Subresources answered by a create: ``pods/binding`` (the scheduler's bind, as upstream's
``BindingREST``) and ``serviceaccounts/token`` (the TokenRequest API, delegated to
authentication through :class:`~numaplane.apiserver.rest_common.TokenIssuer`)."""

from __future__ import annotations

from numaplane.apiserver import errors
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
        """Assign a pod to a node: ``spec.nodeName``, the ``PodScheduled`` condition and the
        binding's annotations, refused once the pod is bound, being deleted or gated."""
        binding = clone(body)
        metadata = meta(binding)
        name = metadata.get("name", "")
        if url_name and url_name != name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        target = binding.get("target") or {}
        errs: list[errors.FieldError] = []
        if target.get("kind", "") not in ("", "Node"):
            errs.append(
                errors.not_supported("target.kind", target.get("kind"), ["Node", "<empty>"])
            )
        if not target.get("name"):
            errs.append(errors.required("target.name"))
        if errs:
            raise errors.invalid("", "Binding", name, errs)
        pods = self.registry.lookup("", "v1", "pods")
        if pods is None:
            raise errors.not_found("pods", name)
        key = object_key(pods, namespace, name)
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
        if metadata.get("resourceVersion") and resource_version(binding) != resource_version(pod):
            raise _bind_refusal(name, errors.OBJECT_MODIFIED)
        if pod_meta.get("deletionTimestamp"):
            raise _bind_refusal(name, f"pod {name} is being deleted, cannot be assigned to a host")
        spec = pod.get("spec", {})
        if spec.get("nodeName"):
            raise _bind_refusal(
                name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            )
        if spec.get("schedulingGates"):
            raise _bind_refusal(name, f"pod {name} has non-empty .spec.schedulingGates")
        bound = clone(pod)
        bound.setdefault("spec", {})["nodeName"] = target["name"]
        if metadata.get("annotations"):
            meta(bound).setdefault("annotations", {}).update(metadata["annotations"])
        _set_pod_scheduled(bound)
        if not ctx.dry_run:
            await self.store.update(key, bound, resource_version(pod))
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
        """``serviceaccounts/token``: a signed token for an existing ServiceAccount."""
        sa = self.store.get_latest(object_key(info, namespace, name))
        if sa is None:
            raise errors.not_found("serviceaccounts", name)
        if self.token_issuer is None:
            raise errors.method_not_supported("serviceaccounts/token", "create")
        return RestResult(self.token_issuer.token_request(sa, clone(body)), 201)


def _set_pod_scheduled(pod: Object) -> None:
    """``podutil.UpdatePodCondition`` with ``PodScheduled=True``."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                condition["status"] = "True"
                condition["lastTransitionTime"] = now_rfc3339()
            return
    conditions.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": None})
    conditions[-1]["lastTransitionTime"] = now_rfc3339()
