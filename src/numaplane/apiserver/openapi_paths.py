"""The ``paths`` of the OpenAPI documents: one entry per REST endpoint of a served resource, each
operation tagged with ``x-kubernetes-action`` and ``x-kubernetes-group-version-kind`` as
kube-apiserver's installer writes them.

kubectl reads them to decide whether the server validates fields itself: for ``--validate``
(default ``strict``) it looks, in the resource's group-version document, for a PATCH operation
of the object's kind and checks that it lists the ``fieldValidation`` query parameter; every
PATCH here does, so kubectl sends ``fieldValidation=Strict`` instead of validating client-side.
"""

from __future__ import annotations

import re
from typing import Any, Final

from numaplane.apiserver.resource import ResourceInfo

Operation = dict[str, Any]

#: The query parameters of each action, as kube-apiserver 1.32 declares them.
_LIST_PARAMS: Final = (
    ("allowWatchBookmarks", "boolean"),
    ("continue", "string"),
    ("fieldSelector", "string"),
    ("labelSelector", "string"),
    ("limit", "integer"),
    ("resourceVersion", "string"),
    ("resourceVersionMatch", "string"),
    ("sendInitialEvents", "boolean"),
    ("timeoutSeconds", "integer"),
    ("watch", "boolean"),
)
_WRITE_PARAMS: Final = (
    ("dryRun", "string"),
    ("fieldManager", "string"),
    ("fieldValidation", "string"),
)
_PATCH_PARAMS: Final = (*_WRITE_PARAMS, ("force", "boolean"))
_DELETE_PARAMS: Final = (
    ("dryRun", "string"),
    ("gracePeriodSeconds", "integer"),
    ("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean"),
    ("orphanDependents", "boolean"),
    ("propagationPolicy", "string"),
)
_DESCRIPTIONS: Final = {
    "fieldValidation": (
        "fieldValidation instructs the server on how to handle objects in the request "
        "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: "
        "This will ignore any unknown fields that are silently dropped from the object, and will "
        "ignore all but the last duplicate field that the decoder encounters. This is the "
        "default behavior prior to v1.23. - Warn: This will send a warning via the standard "
        "warning response header for each unknown field that is dropped from the object, and "
        "for each duplicate field that is encountered. The request will still succeed if there "
        "are no other errors, and will only persist the last of any duplicate fields. This is "
        "the default in v1.23+ - Strict: This will fail the request with a BadRequest error if "
        "any unknown fields would be dropped from the object, or if any duplicate fields are "
        "present. The error returned from the server will contain all unknown and duplicate "
        "fields encountered."
    ),
    "dryRun": (
        "When present, indicates that modifications should not be persisted. An invalid or "
        "unrecognized dryRun directive will result in an error response and no further "
        "processing of the request. Valid values are: - All: all dry run stages will be "
        "processed"
    ),
    "fieldManager": (
        "fieldManager is a name associated with the actor or entity that is making these "
        "changes. The value must be less than or 128 characters long, and only contain "
        "printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint."
    ),
    "pretty": (
        "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent "
        "indicates a browser or command-line HTTP tool (curl and wget)."
    ),
    "namespace": "object name and auth scope, such as for teams and projects",
}
_PATCH_TYPES: Final = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
_MEDIA: Final = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def group_identifier(group: str) -> str:
    """The group as it appears in operation ids and tags: ``Core``, ``Batch``,
    ``RbacAuthorization`` (a ``.k8s.io`` suffix dropped), ``KueueXK8sIo``."""
    if not group:
        return "Core"
    words = re.split(r"[.\-]", group.removesuffix(".k8s.io"))
    return "".join(w[:1].upper() + w[1:] for w in words if w)


class PathBuilder:
    """Writes the operations of the resources of one group-version, in OpenAPI ``v3`` form
    (``True``) or Swagger 2.0 form (``False``); ``ref`` prefixes definition names."""

    def __init__(self, group: str, version: str, *, v3: bool, ref: str) -> None:
        self.group, self.version, self.v3, self.ref = group, version, v3, ref
        gid = group_identifier(group)
        self._op_prefix = f"{gid}{version[:1].upper()}{version[1:]}"
        self._tag = f"{gid[:1].lower()}{gid[1:]}_{version}"
        self._base = f"/apis/{group}/{version}" if group else f"/api/{version}"

    def _param(self, name: str, kind: str, where: str = "query") -> dict[str, Any]:
        param: dict[str, Any] = {"name": name, "in": where}
        if name in _DESCRIPTIONS:
            param["description"] = _DESCRIPTIONS[name]
        if where == "path":
            param["required"] = True
        if self.v3:
            param["schema"] = {"type": kind, "uniqueItems": True}
        else:
            param["type"] = kind
            param["uniqueItems"] = True
        return param

    def _schema(self, name: str) -> dict[str, str]:
        return {"$ref": self.ref + name}

    def _responses(self, codes: tuple[str, ...], definition: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for code in codes:
            text = {"200": "OK", "201": "Created", "202": "Accepted"}[code]
            if self.v3:
                content = {m: {"schema": self._schema(definition)} for m in _MEDIA}
                out[code] = {"description": text, "content": content}
            else:
                out[code] = {"description": text, "schema": self._schema(definition)}
        out["401"] = {"description": "Unauthorized"}
        return out

    def _operation(
        self,
        info: ResourceInfo,
        action: str,
        op_id: str,
        description: str,
        params: tuple[tuple[str, str], ...],
        responses: dict[str, Any],
        body: str = "",
        body_media: tuple[str, ...] = ("*/*",),
    ) -> Operation:
        """One operation; ``body`` names the definition of its request body, if it takes one."""
        parameters = [self._param(name, kind) for name, kind in params]
        op: Operation = {"tags": [self._tag], "description": description, "operationId": op_id}
        if body and self.v3:
            content = {m: {"schema": self._schema(body)} for m in body_media}
            op["requestBody"] = {"content": content, "required": True}
        elif body:
            op["consumes"] = list(body_media)
            body_param = {"name": "body", "in": "body", "required": True}
            parameters.insert(0, {**body_param, "schema": self._schema(body)})
        if not self.v3:
            op["produces"] = list(_MEDIA)
            op["schemes"] = ["https"]
        op["parameters"] = parameters
        op["responses"] = responses
        op["x-kubernetes-action"] = action
        op["x-kubernetes-group-version-kind"] = {
            "group": self.group,
            "version": self.version,
            "kind": info.kind,
        }
        return op

    def resource_paths(
        self, info: ResourceInfo, definition: str, list_definition: str, custom: bool
    ) -> dict[str, dict[str, Any]]:
        """Every path of ``info`` (collection, object, subresources, all-namespaces list)."""
        kind, verbs = info.kind, set(info.verbs)
        scoped = "Namespaced" if info.namespaced else ""
        prefix = f"{self._base}/namespaces/{{namespace}}" if info.namespaced else self._base
        common = [self._param("pretty", "string")]
        if info.namespaced:
            common.insert(0, self._param("namespace", "string", "path"))
        status = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
        patch_types = _PATCH_TYPES[:3] if custom else _PATCH_TYPES
        paths: dict[str, dict[str, Any]] = {}

        def op_id(verb: str, suffix: str = "") -> str:
            return f"{verb}{self._op_prefix}{scoped}{kind}{suffix}"

        collection: dict[str, Any] = {}
        if "list" in verbs:
            collection["get"] = self._operation(
                info,
                "list",
                op_id("list"),
                f"list or watch objects of kind {kind}",
                _LIST_PARAMS,
                self._responses(("200",), list_definition),
            )
        if "create" in verbs:
            collection["post"] = self._operation(
                info,
                "post",
                op_id("create"),
                f"create a {kind}",
                _WRITE_PARAMS,
                self._responses(("200", "201", "202"), definition),
                definition,
            )
        if "deletecollection" in verbs:
            collection["delete"] = self._operation(
                info,
                "deletecollection",
                op_id("deleteCollection"),
                f"delete collection of {kind}",
                (*_DELETE_PARAMS, *_LIST_PARAMS),
                self._responses(("200",), status),
            )
        if collection:
            paths[f"{prefix}/{info.resource}"] = {**collection, "parameters": common}

        item: dict[str, Any] = {}
        name_params = [self._param("name", "string", "path"), *common]
        if "get" in verbs:
            item["get"] = self._operation(
                info,
                "get",
                op_id("read"),
                f"read the specified {kind}",
                (),
                self._responses(("200",), definition),
            )
        if "update" in verbs:
            item["put"] = self._operation(
                info,
                "put",
                op_id("replace"),
                f"replace the specified {kind}",
                _WRITE_PARAMS,
                self._responses(("200", "201"), definition),
                definition,
            )
        if "patch" in verbs:
            patch = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
            item["patch"] = self._operation(
                info,
                "patch",
                op_id("patch"),
                f"partially update the specified {kind}",
                _PATCH_PARAMS,
                self._responses(("200", "201"), definition),
                patch,
                patch_types,
            )
        if "delete" in verbs:
            item["delete"] = self._operation(
                info,
                "delete",
                op_id("delete"),
                f"delete a {kind}",
                _DELETE_PARAMS,
                self._responses(("200", "202"), status),
            )
        if item:
            paths[f"{prefix}/{info.resource}/{{name}}"] = {**item, "parameters": name_params}

        if "status" in info.subresources:
            paths[f"{prefix}/{info.resource}/{{name}}/status"] = {
                "get": self._operation(
                    info,
                    "get",
                    op_id("read", "Status"),
                    f"read status of the specified {kind}",
                    (),
                    self._responses(("200",), definition),
                ),
                "put": self._operation(
                    info,
                    "put",
                    op_id("replace", "Status"),
                    f"replace status of the specified {kind}",
                    _WRITE_PARAMS,
                    self._responses(("200", "201"), definition),
                    definition,
                ),
                "patch": self._operation(
                    info,
                    "patch",
                    op_id("patch", "Status"),
                    f"partially update status of the specified {kind}",
                    _PATCH_PARAMS,
                    self._responses(("200", "201"), definition),
                    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
                    patch_types,
                ),
                "parameters": name_params,
            }

        if info.namespaced and "list" in verbs:
            paths[f"{self._base}/{info.resource}"] = {
                "get": self._operation(
                    info,
                    "list",
                    f"list{self._op_prefix}{kind}ForAllNamespaces",
                    f"list or watch objects of kind {kind}",
                    _LIST_PARAMS,
                    self._responses(("200",), list_definition),
                ),
                "parameters": [self._param("pretty", "string")],
            }
        return paths
