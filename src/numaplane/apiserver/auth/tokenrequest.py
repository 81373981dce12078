"""The TokenRequest API (``POST .../serviceaccounts/NAME/token``, what ``kubectl create token``
calls) and the tokens controller's filling of ``kubernetes.io/service-account-token`` Secrets,
as ``pkg/registry/core/serviceaccount/storage/token.go`` and ``pkg/controller/serviceaccount``
do them. Pure: objects come through ``lookup``, the clock is a parameter.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping
from typing import Any, Final

from numaplane.apiserver import errors
from numaplane.apiserver.auth.serviceaccount import (
    CLUSTER_CLAIM,
    DEFAULT_EXPIRATION_SECONDS,
    EXTENDED_EXPIRATION_SECONDS,
    MAX_EXPIRATION_SECONDS,
    MIN_EXPIRATION_SECONDS,
    SA_UID_ANNOTATION,
    WARN_ONLY_EXPIRATION_SECONDS,
    Lookup,
    Object,
    TokenSigner,
    legacy_token,
    meta_of,
    rfc3339,
    service_account_username,
)


def fill_service_account_token_secret(
    secret: Object,
    sa: Object,
    ca_pem: bytes,
    namespace: str,
    *,
    signer: TokenSigner,
    cluster: str,
) -> Object:
    """The tokens controller's work on a ``kubernetes.io/service-account-token`` Secret: a copy
    with ``data.token``, ``data["ca.crt"]`` and ``data.namespace`` filled and the account's uid
    annotated. The Secret must already name ``sa`` in its annotation (validation's job)."""
    out = dict(secret)
    meta = dict(meta_of(secret))
    annotations = dict(meta.get("annotations") or {})
    annotations[SA_UID_ANNOTATION] = str(meta_of(sa).get("uid", ""))
    meta["annotations"] = annotations
    out["metadata"] = meta
    token = legacy_token(signer, sa, str(meta.get("name", "")), cluster)
    data = dict(secret.get("data") or {})
    data["token"] = base64.b64encode(token.encode()).decode()
    data["ca.crt"] = base64.b64encode(ca_pem).decode()
    data["namespace"] = base64.b64encode(namespace.encode()).decode()
    out["data"] = data
    return out


_TOKEN_REQUEST_GROUP: Final = "authentication.k8s.io"


def _invalid(name: str, errs: list[errors.FieldError]) -> errors.StatusError:
    return errors.invalid(_TOKEN_REQUEST_GROUP, "TokenRequest", name, errs)


def _conflict_bound(group: str, kind: str, name: str, ref_uid: str) -> errors.StatusError:
    why = (
        f"the UID in the bound object reference ({ref_uid}) does not match the UID in record. "
        "The object might have been deleted and then recreated"
    )
    gr = f"{kind}.{group}" if group else kind
    return errors.conflict(gr, name, why)


def _bind(
    ref: Mapping[str, Any], sa_name: str, namespace: str, lookup: Lookup
) -> tuple[dict[str, Any], bool]:
    """The ``kubernetes.io`` claims of the bound object, and whether it is a pod."""
    api_version = str(ref.get("apiVersion", ""))
    kind = str(ref.get("kind", ""))
    name = str(ref.get("name", ""))
    group, _, version = api_version.rpartition("/")
    claims: dict[str, Any] = {}
    if group == "" and kind == "Pod":
        pod = lookup("pods", namespace, name)
        if pod is None:
            raise errors.not_found("pods", name)
        if (pod.get("spec") or {}).get("serviceAccountName", "") != sa_name:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{sa_name}" to pod running with '
                "different serviceaccount name."
            )
        uid = str(meta_of(pod).get("uid", ""))
        claims["pod"] = {"name": name, "uid": uid}
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        if node_name:
            # The pod's node rides along (ServiceAccountTokenPodNodeInfo); a node that is gone
            # is named without its uid rather than failing the request.
            node = lookup("nodes", "", node_name)
            claims["node"] = {"name": node_name}
            if node is not None:
                claims["node"]["uid"] = str(meta_of(node).get("uid", ""))
    elif group == "" and kind == "Secret":
        secret = lookup("secrets", namespace, name)
        if secret is None:
            raise errors.not_found("secrets", name)
        uid = str(meta_of(secret).get("uid", ""))
        claims["secret"] = {"name": name, "uid": uid}
    elif group == "" and kind == "Node":
        node = lookup("nodes", "", name)
        if node is None:
            raise errors.not_found("nodes", name)
        uid = str(meta_of(node).get("uid", ""))
        claims["node"] = {"name": name, "uid": uid}
    else:
        gvk = f"{group}/{version}, Kind={kind}"
        raise errors.bad_request(f"cannot bind token to object of type {gvk}")
    ref_uid = str(ref.get("uid") or "")
    if ref_uid and ref_uid != uid:
        raise _conflict_bound(group, kind, name, ref_uid)
    return claims, kind == "Pod"


def issue_token(
    signer: TokenSigner,
    cluster: str,
    namespace: str,
    name: str,
    body: Mapping[str, Any],
    lookup: Lookup,
    now: float | None = None,
) -> Object:
    """``POST .../serviceaccounts/NAME/token``: the TokenRequest ``body`` answered with its
    defaults filled and ``status.token``/``status.expirationTimestamp``, as
    ``pkg/registry/core/serviceaccount/storage/token.go`` does; raises :class:`StatusError`
    (422 for a bad expiration, 404 for a missing account or bound object, 400/409 for a bad
    binding)."""
    now = time.time() if now is None else now
    meta = dict(meta_of(body))
    if meta.get("name") and meta["name"] != name:
        err = errors.invalid_value(
            "metadata.name", meta["name"], "must match the service account name if specified"
        )
        raise _invalid(name, [err])
    if meta.get("namespace") and meta["namespace"] != namespace:
        err = errors.invalid_value(
            "metadata.namespace",
            meta["namespace"],
            "must match the service account namespace if specified",
        )
        raise _invalid(name, [err])
    sa = lookup("serviceaccounts", namespace, name)
    if sa is None:
        raise errors.not_found("serviceaccounts", name)
    # kubectl sends every spec field, unset ones as null; upstream leaves those out.
    spec = {k: v for k, v in (body.get("spec") or {}).items() if v is not None}
    audiences = list(spec.get("audiences") or []) or list(signer.api_audiences)
    spec["audiences"] = audiences
    expiration = spec.get("expirationSeconds")
    expiration = DEFAULT_EXPIRATION_SECONDS if expiration is None else expiration
    spec["expirationSeconds"] = expiration
    if not isinstance(expiration, int) or isinstance(expiration, bool):
        raise errors.bad_request(f"spec.expirationSeconds: expected an integer, got {expiration!r}")
    problems = []
    if expiration < MIN_EXPIRATION_SECONDS:
        problems.append(
            errors.invalid_value(
                "spec.expirationSeconds",
                expiration,
                "may not specify a duration less than 10 minutes",
            )
        )
    if expiration > MAX_EXPIRATION_SECONDS:
        problems.append(
            errors.invalid_value(
                "spec.expirationSeconds",
                expiration,
                "may not specify a duration larger than 2^32 seconds",
            )
        )
    if problems:
        raise _invalid("", problems)
    sa_meta = meta_of(sa)
    private: dict[str, Any] = {
        "namespace": namespace,
        "serviceaccount": {"name": name, "uid": str(sa_meta.get("uid", ""))},
    }
    is_pod = False
    ref = spec.get("boundObjectRef")
    if isinstance(ref, Mapping):
        bound, is_pod = _bind(ref, name, namespace, lookup)
        private.update(bound)
    lifetime = expiration
    if (
        is_pod
        and expiration == WARN_ONLY_EXPIRATION_SECONDS
        and set(audiences) & set(signer.api_audiences)
    ):
        private["warnafter"] = int(now) + expiration
        lifetime = EXTENDED_EXPIRATION_SECONDS
    issued = int(now)
    claims = {
        "aud": audiences,
        "exp": issued + lifetime,
        "iat": issued,
        "iss": signer.issuer,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": private,
        "nbf": issued,
        "sub": service_account_username(namespace, name),
        CLUSTER_CLAIM: cluster,
    }
    token = signer.sign(claims)
    meta["name"] = name
    meta["namespace"] = namespace
    meta["creationTimestamp"] = rfc3339(now)
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": meta,
        "spec": spec,
        "status": {"token": token, "expirationTimestamp": rfc3339(issued + expiration)},
    }
