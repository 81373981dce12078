"""The schema hints that strategic merge patch and server-side apply need: for each field, how its
list merges (upstream's ``patchStrategy``/``patchMergeKey`` struct tags for strategic merge
patch; ``+listType``/``+listMapKey``/``+mapType``/``+structType`` markers for server-side apply).

One small type, :class:`Schema`, serves both: the built-in kinds declare theirs here
(:func:`builtin_schema`, transcribed from the markers of k8s.io/api for the fields that carry
them), and a CustomResourceDefinition's ``openAPIV3Schema`` becomes one with
:func:`schema_from_openapi` (``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``,
``x-kubernetes-map-type``, ``x-kubernetes-patch-strategy``, ``x-kubernetes-patch-merge-key``).
A field the schema does not know is *deduced* as upstream does for untyped values: lists are
atomic (strategic merge patch replaces them), maps merge key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final


@dataclass(frozen=True)
class Schema:
    """What merging needs to know about one value.

    - ``fields``: the known properties of an object value (name -> their schema).
    - ``elements``: the schema of a list's items, or of a map's values (``additionalProperties``).
    - ``list_type``: ``"atomic"``, ``"set"`` or ``"map"`` for a list (``""``: undeclared, atomic).
    - ``map_keys``: the keys identifying items of a ``"map"`` list; ``key_defaults`` the value a
      missing key takes (``protocol: TCP`` for container ports), as the OpenAPI default would.
    - ``map_type``: ``"atomic"`` for an object or map owned and replaced as a whole
      (``+structType=atomic``/``+mapType=atomic``), else ``""`` (granular).
    - ``patch_strategy``/``patch_merge_key``: the strategic-merge-patch tags of the field holding
      this value (``"merge"``, ``"replace"``, ``"retainKeys"``, ``"merge,retainKeys"``).
    - ``zero_fields``: for a built-in kind, the top-level struct fields its Go zero value holds
      (``spec``, ``status``): a create does not come to own them themselves, as upstream.
    """

    fields: Mapping[str, Schema] = field(default_factory=dict)
    elements: Schema | None = None
    list_type: str = ""
    map_keys: tuple[str, ...] = ()
    key_defaults: Mapping[str, Any] = field(default_factory=dict)
    map_type: str = ""
    patch_strategy: str = ""
    patch_merge_key: str = ""
    zero_fields: tuple[str, ...] = ()

    def child(self, name: str) -> Schema:
        """The schema of property ``name`` (the map value schema, or :data:`UNKNOWN`)."""
        found = self.fields.get(name)
        if found is not None:
            return found
        return self.elements if self.elements is not None else UNKNOWN

    def item(self) -> Schema:
        """The schema of this list's items (:data:`UNKNOWN` when undeclared)."""
        return self.elements if self.elements is not None else UNKNOWN

    def strategies(self) -> tuple[str, ...]:
        """The strategic-merge-patch strategies of this field, split (``merge,retainKeys``)."""
        return tuple(s for s in self.patch_strategy.split(",") if s)


UNKNOWN: Final = Schema()
"""An undeclared value: lists atomic, maps granular."""


def schema_from_openapi(node: Mapping[str, Any] | None) -> Schema:
    """The :class:`Schema` of a structural OpenAPI v3 schema (a CRD version's
    ``schema.openAPIV3Schema``), reading the ``x-kubernetes-*`` list, map and patch markers."""
    if not node:
        return UNKNOWN
    fields = {
        name: schema_from_openapi(sub) for name, sub in (node.get("properties") or {}).items()
    }
    elements: Schema | None = None
    items = node.get("items")
    if isinstance(items, Mapping):
        elements = schema_from_openapi(items)
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        elements = schema_from_openapi(additional)
    keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
    key_defaults: dict[str, Any] = {}
    if elements is not None and keys and isinstance(items, Mapping):
        for key in keys:
            prop = (items.get("properties") or {}).get(key) or {}
            if "default" in prop:
                key_defaults[key] = prop["default"]
    return Schema(
        fields=fields,
        elements=elements,
        list_type=str(node.get("x-kubernetes-list-type") or ""),
        map_keys=keys,
        key_defaults=key_defaults,
        map_type=str(node.get("x-kubernetes-map-type") or ""),
        patch_strategy=str(node.get("x-kubernetes-patch-strategy") or ""),
        patch_merge_key=str(node.get("x-kubernetes-patch-merge-key") or ""),
    )


# --- the built-in kinds ---------------------------------------------------------------------


def _obj(**fields: Schema) -> Schema:
    return Schema(fields=fields)


def _map_list(
    *keys: str, item: Schema = UNKNOWN, strategy: str = "merge", defaults: Mapping[str, Any] = {}
) -> Schema:
    # `patchMergeKey` is the first list-map key for every built-in list that has both.
    return Schema(
        elements=item,
        list_type="map",
        map_keys=keys,
        key_defaults=dict(defaults),
        patch_strategy=strategy,
        patch_merge_key=keys[0],
    )


ATOMIC_LIST: Final = Schema(list_type="atomic")
ATOMIC: Final = Schema(map_type="atomic")
MERGE_SET: Final = Schema(list_type="set", patch_strategy="merge")


def _atomic_merge_list(key: str) -> Schema:
    # Lists that strategic merge patch merges by key while server-side apply owns them whole.
    return Schema(list_type="atomic", patch_strategy="merge", patch_merge_key=key)


_STRING_MAP: Final = Schema(elements=UNKNOWN)

OBJECT_META: Final = _obj(
    labels=_STRING_MAP,
    annotations=_STRING_MAP,
    finalizers=MERGE_SET,
    ownerReferences=_map_list("uid"),
    managedFields=ATOMIC_LIST,
)

_LABEL_SELECTOR: Final = ATOMIC

_CONTAINER: Final = _obj(
    command=ATOMIC_LIST,
    args=ATOMIC_LIST,
    ports=_map_list("containerPort", "protocol", defaults={"protocol": "TCP"}),
    env=_map_list("name"),
    envFrom=ATOMIC_LIST,
    volumeMounts=_map_list("mountPath"),
    volumeDevices=_map_list("devicePath"),
    resizePolicy=ATOMIC_LIST,
    resources=_obj(claims=Schema(list_type="map", map_keys=("name",))),
    securityContext=_obj(capabilities=_obj(add=ATOMIC_LIST, drop=ATOMIC_LIST)),
)

_NODE_SELECTOR: Final = _obj(nodeSelectorTerms=ATOMIC_LIST)
_AFFINITY: Final = _obj(
    nodeAffinity=_obj(
        requiredDuringSchedulingIgnoredDuringExecution=ATOMIC,
        preferredDuringSchedulingIgnoredDuringExecution=ATOMIC_LIST,
    ),
    podAffinity=_obj(
        requiredDuringSchedulingIgnoredDuringExecution=ATOMIC_LIST,
        preferredDuringSchedulingIgnoredDuringExecution=ATOMIC_LIST,
    ),
    podAntiAffinity=_obj(
        requiredDuringSchedulingIgnoredDuringExecution=ATOMIC_LIST,
        preferredDuringSchedulingIgnoredDuringExecution=ATOMIC_LIST,
    ),
)

POD_SPEC: Final = _obj(
    volumes=_map_list("name", strategy="merge,retainKeys"),
    initContainers=_map_list("name", item=_CONTAINER),
    containers=_map_list("name", item=_CONTAINER),
    ephemeralContainers=_map_list("name", item=_CONTAINER),
    imagePullSecrets=_map_list("name"),
    hostAliases=_map_list("ip"),
    tolerations=ATOMIC_LIST,
    topologySpreadConstraints=_map_list("topologyKey", "whenUnsatisfiable"),
    readinessGates=ATOMIC_LIST,
    schedulingGates=_map_list("name"),
    resourceClaims=_map_list("name", strategy="merge,retainKeys"),
    nodeSelector=Schema(map_type="atomic"),
    affinity=_AFFINITY,
    securityContext=_obj(supplementalGroups=ATOMIC_LIST, sysctls=ATOMIC_LIST),
    dnsConfig=_obj(nameservers=ATOMIC_LIST, searches=ATOMIC_LIST, options=ATOMIC_LIST),
)

POD_STATUS: Final = _obj(
    conditions=_map_list("type"),
    podIPs=_map_list("ip"),
    hostIPs=_atomic_merge_list("ip"),
    containerStatuses=ATOMIC_LIST,
    initContainerStatuses=ATOMIC_LIST,
    ephemeralContainerStatuses=ATOMIC_LIST,
    resourceClaimStatuses=_map_list("name", strategy="merge,retainKeys"),
)

POD_TEMPLATE_SPEC: Final = _obj(metadata=OBJECT_META, spec=POD_SPEC)


def _kind(
    spec: Schema = UNKNOWN,
    status: Schema = UNKNOWN,
    zero: tuple[str, ...] = (),
    **more: Schema,
) -> Schema:
    fields = {"metadata": OBJECT_META, "spec": spec, "status": status, **more}
    return Schema(fields=fields, zero_fields=zero)


_SPEC_STATUS: Final = ("spec", "status")


_CONDITIONS_BY_TYPE: Final = _map_list("type")

BUILTIN_SCHEMAS: Final[Mapping[tuple[str, str], Schema]] = {
    ("", "Pod"): _kind(POD_SPEC, POD_STATUS, _SPEC_STATUS),
    ("", "Node"): _kind(
        _obj(podCIDRs=MERGE_SET, taints=ATOMIC_LIST),
        _obj(
            conditions=_CONDITIONS_BY_TYPE,
            addresses=_atomic_merge_list("type"),
            images=ATOMIC_LIST,
            volumesInUse=ATOMIC_LIST,
            volumesAttached=ATOMIC_LIST,
        ),
        _SPEC_STATUS,
    ),
    ("", "Namespace"): _kind(
        _obj(finalizers=ATOMIC_LIST), _obj(conditions=_CONDITIONS_BY_TYPE), _SPEC_STATUS
    ),
    ("", "ServiceAccount"): _kind(secrets=_atomic_merge_list("name"), imagePullSecrets=ATOMIC_LIST),
    ("", "Secret"): _kind(),
    ("", "ConfigMap"): _kind(),
    ("", "Event"): _kind(zero=("involvedObject", "source")),
    ("events.k8s.io", "Event"): _kind(zero=("regarding", "deprecatedSource")),
    ("batch", "Job"): _kind(
        _obj(
            template=POD_TEMPLATE_SPEC,
            selector=_LABEL_SELECTOR,
            podFailurePolicy=_obj(rules=ATOMIC_LIST),
            successPolicy=_obj(rules=ATOMIC_LIST),
        ),
        _obj(
            conditions=_atomic_merge_list("type"),
            uncountedTerminatedPods=_obj(
                succeeded=Schema(list_type="set"), failed=Schema(list_type="set")
            ),
        ),
        _SPEC_STATUS,
    ),
    ("coordination.k8s.io", "Lease"): _kind(zero=("spec",)),
    ("scheduling.k8s.io", "PriorityClass"): _kind(),
    ("rbac.authorization.k8s.io", "Role"): _kind(rules=ATOMIC_LIST),
    ("rbac.authorization.k8s.io", "ClusterRole"): _kind(
        rules=ATOMIC_LIST, aggregationRule=_obj(clusterRoleSelectors=ATOMIC_LIST)
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): _kind(
        zero=("roleRef",), subjects=ATOMIC_LIST, roleRef=ATOMIC
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _kind(
        zero=("roleRef",), subjects=ATOMIC_LIST, roleRef=ATOMIC
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _kind(
        _obj(
            versions=ATOMIC_LIST,
            names=_obj(shortNames=ATOMIC_LIST, categories=ATOMIC_LIST),
        ),
        _obj(
            # +listType=map without a patch strategy: strategic merge patch replaces it.
            conditions=Schema(list_type="map", map_keys=("type",)),
            storedVersions=ATOMIC_LIST,
            acceptedNames=_obj(shortNames=ATOMIC_LIST, categories=ATOMIC_LIST),
        ),
        _SPEC_STATUS,
    ),
}

OBJECT_SCHEMA: Final = _kind()
"""What every object shares (``metadata``), for kinds without a declared schema."""


def builtin_schema(group: str, kind: str) -> Schema:
    """The schema of the built-in ``group``/``kind`` (``("", "Pod")``, ``("batch", "Job")``), or
    the object-metadata-only schema for a kind this table does not declare."""
    return BUILTIN_SCHEMAS.get((group, kind), OBJECT_SCHEMA)


def custom_resource_schema(openapi_v3: Mapping[str, Any] | None) -> Schema:
    """The schema of a custom resource from its CRD version's ``openAPIV3Schema``, with the
    object metadata every resource shares (the CRD schema leaves ``metadata`` opaque)."""
    declared = schema_from_openapi(openapi_v3)
    fields = dict(declared.fields)
    fields["metadata"] = OBJECT_META
    return Schema(
        fields=fields,
        elements=declared.elements,
        list_type=declared.list_type,
        map_type=declared.map_type,
    )
