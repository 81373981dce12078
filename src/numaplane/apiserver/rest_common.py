"""What every REST verb shares: the request context, the result, object-metadata helpers, name
generation, version conversion of stored objects and the object size limit.

The verbs themselves live in ``rest`` (the :class:`~numaplane.apiserver.rest.Cluster` that ties
them together), ``rest_write`` (create, update, patch), ``rest_read`` (get, list, watch) and
``deletion``; they all import this module and never each other in a cycle.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from numaplane.apiserver import errors
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.storage import ObjectKey
from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]

#: apimachinery's ``names.SimpleNameGenerator``: 5 characters from an alphabet without vowels
#: (no accidental words) nor look-alike digits, the base cut so that the result fits 63.
NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
NAME_RANDOM_LENGTH: Final = 5
MAX_GENERATED_BASE: Final = 63 - NAME_RANDOM_LENGTH

#: etcd's default ``--max-request-bytes`` (1.5 MiB): kube-apiserver has no limit of its own on a
#: stored object, so a bigger one fails in etcd, and kubectl prints etcd's words.
MAX_OBJECT_BYTES: Final = 1536 * 1024

FIELD_VALIDATIONS: Final = ("Strict", "Warn", "Ignore")


@dataclass(frozen=True)
class RequestContext:
    """Who asks and how: the user, ``dryRun=All``, the ``fieldManager`` and the
    ``fieldValidation`` directive (``Strict``, ``Warn`` or ``Ignore``)."""

    user: UserInfo
    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Strict"


@dataclass(frozen=True)
class RestResult:
    """A verb's answer: the response ``body``, the HTTP ``code`` and ``Warning`` headers.

    ``body`` may share dicts with the store (objects are never copied on reads): render it,
    never mutate it."""

    body: dict[str, Any]
    code: int = 200
    warnings: tuple[str, ...] = ()


class TokenIssuer(Protocol):
    """The service-account token work the REST layer delegates to authentication."""

    def fill_secret(self, secret: Object, service_account: Object) -> Object:
        """``secret`` (type ``kubernetes.io/service-account-token``) with ``token``,
        ``ca.crt`` and ``namespace`` filled, as upstream's tokens controller writes it."""

    def token_request(self, service_account: Object, request: Object) -> Object:
        """The answered ``TokenRequest`` for ``service_account``
        (``serviceaccounts/NAME/token``)."""


#: A resource served by a handler instead of the store (``SelfSubjectAccessReview``, ...):
#: called with the context and the decoded body, returns the response object.
VirtualCreate = Callable[[RequestContext, Object], Awaitable[Object]]


def now_rfc3339() -> str:
    """Now as ``metav1.Time`` serialises it: RFC 3339, UTC, whole seconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def rfc3339(epoch_s: float) -> str:
    """``epoch_s`` as ``metav1.Time`` serialises it."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def clone(obj: Object) -> Object:
    """A deep copy of a JSON object (objects from the store are shared and never mutated)."""
    copied: Object = orjson.loads(orjson.dumps(obj))
    return copied


def meta(obj: Object) -> dict[str, Any]:
    """``obj.metadata``, created empty when absent."""
    found = obj.get("metadata")
    if not isinstance(found, dict):
        found = {}
        obj["metadata"] = found
    return found


def generate_name(base: str) -> str:
    """``base`` plus five random characters, as ``metadata.generateName`` asks."""
    base = base[:MAX_GENERATED_BASE]
    return base + "".join(secrets.choice(NAME_ALPHABET) for _ in range(NAME_RANDOM_LENGTH))


def storage_resource(info: ResourceInfo) -> str:
    """The store's resource name for ``info``'s objects: its group-resource, or the one it
    shares a store with (events.k8s.io Events live with core Events, as upstream)."""
    shared = info.extra.get("storage_resource")
    return shared if isinstance(shared, str) else info.group_resource


def object_key(info: ResourceInfo, namespace: str, name: str) -> ObjectKey:
    """Where an object of ``info`` lives in the store."""
    return ObjectKey(storage_resource(info), namespace if info.namespaced else "", name)


def resource_version(obj: Object) -> int:
    """``metadata.resourceVersion`` as a number (0 when absent)."""
    text = obj.get("metadata", {}).get("resourceVersion") or "0"
    try:
        return int(text)
    except ValueError:
        return -1


def storage_api_version(info: ResourceInfo) -> str:
    """The ``apiVersion`` objects of ``info`` are stored at (a CRD's storage version)."""
    version = info.storage_version or info.version
    return f"{info.group}/{version}" if info.group else version


def for_storage(obj: Object, info: ResourceInfo) -> Object:
    """``obj`` (changed in place) at the storage version: served versions of one CRD differ
    only in ``apiVersion`` (no conversion webhook: upstream's ``None`` conversion strategy); a
    resource sharing another's store is converted to that one's shape."""
    convert = info.extra.get("to_storage")
    if callable(convert):
        converted = convert(obj)
        obj.clear()
        obj.update(converted)
        return obj
    obj["apiVersion"] = storage_api_version(info)
    obj["kind"] = info.kind
    return obj


def as_served(obj: Object, info: ResourceInfo) -> Object:
    """``obj`` (shared, from the store) as ``info``'s version serves it, copied only when it
    must change."""
    convert = info.extra.get("from_storage")
    if callable(convert):
        served: Object = convert(obj)
        return served
    if obj.get("apiVersion") == info.group_version:
        return obj
    copied = dict(obj)
    copied["apiVersion"] = info.group_version
    return copied


def check_size(obj: Object) -> None:
    """Refuse an object larger than etcd accepts, with etcd's words (kube-apiserver passes them
    on as an unnamed 500)."""
    if len(orjson.dumps(obj)) > MAX_OBJECT_BYTES:
        raise errors.StatusError(500, "", "etcdserver: request is too large")


def success_status(info: ResourceInfo, name: str, uid: str, code: int = 0) -> Object:
    """The ``Status`` a delete answers with once the object is gone."""
    details: dict[str, Any] = {"name": name, "group": info.group, "kind": info.resource}
    if uid:
        details["uid"] = uid
    body: Object = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
    if code:
        body["code"] = code
    return body


def qualified_kind(info: ResourceInfo) -> str:
    """The group-kind an ``Invalid`` error names (``Job.batch``)."""
    return f"{info.kind}.{info.group}" if info.group else info.kind


def validate_field_validation(value: str) -> None:
    """Refuse an unknown ``fieldValidation`` directive as upstream does."""
    if value not in FIELD_VALIDATIONS:
        raise errors.bad_request(
            f"fieldValidation must be one of {{Ignore, Warn, Strict}}, got {value!s}"
        )


def unknown_field_outcome(ctx: RequestContext, unknown: list[str]) -> tuple[str, ...]:
    """Apply ``ctx.field_validation`` to the unknown fields of a request body: ``Strict``
    refuses (400), ``Warn`` answers with warnings, ``Ignore`` drops them silently."""
    if not unknown or ctx.field_validation == "Ignore":
        return ()
    listed = [f'unknown field "{path}"' for path in unknown]
    if ctx.field_validation == "Strict":
        raise errors.bad_request("strict decoding error: " + ", ".join(listed))
    return tuple(listed)


def forbidden_reason(group_resource: str, name: str, why: str) -> errors.StatusError:
    """A 403 that is not RBAC's: ``pods "x" is forbidden: <why>`` (admission plugins)."""
    group, resource = errors.split_group_resource(group_resource)
    subject = f'{group_resource} "{name}"' if name else group_resource
    return errors.StatusError(
        403,
        "Forbidden",
        f"{subject} is forbidden: {why}",
        {"name": name, "group": group, "kind": resource},
    )
