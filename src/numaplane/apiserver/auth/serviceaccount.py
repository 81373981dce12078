"""ServiceAccount tokens as kube-apiserver signs and checks them (``pkg/serviceaccount``): RS256
JWTs, either legacy Secret-based tokens (issuer ``kubernetes/serviceaccount``, filled into a
``kubernetes.io/service-account-token`` Secret by the tokens controller) or bound tokens from the
TokenRequest API (``serviceaccounts/token``, what ``kubectl create token`` asks for).

Beyond upstream, every token carries the logical cluster it was issued in (the private claim
:data:`CLUSTER_CLAIM`), and a token is only accepted by the cluster named in it: logical
clusters share one signing key, and must not share identities.

Pure: objects are read through a ``lookup(group_resource, namespace, name)`` callable and the
clock is a parameter.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from numaplane.apiserver.user import AUTHENTICATED_GROUP, UserInfo

Object = dict[str, Any]
#: ``lookup(group_resource, namespace, name)`` -> the stored object, or None when absent.
Lookup = Callable[[str, str, str], Object | None]

LEGACY_ISSUER: Final = "kubernetes/serviceaccount"
#: kubeadm's ``--service-account-issuer``; kube-apiserver's API audiences default to it.
DEFAULT_ISSUER: Final = "https://kubernetes.default.svc.cluster.local"
CLUSTER_CLAIM: Final = "numaplane.io/cluster"

SA_PREFIX: Final = "system:serviceaccount:"
SA_GROUP: Final = "system:serviceaccounts"
SECRET_TYPE: Final = "kubernetes.io/service-account-token"
SA_NAME_ANNOTATION: Final = "kubernetes.io/service-account.name"
SA_UID_ANNOTATION: Final = "kubernetes.io/service-account.uid"
INVALID_SINCE_LABEL: Final = "kubernetes.io/legacy-token-invalid-since"

#: TokenRequest defaults and bounds (``pkg/apis/authentication``).
DEFAULT_EXPIRATION_SECONDS: Final = 3600
MIN_EXPIRATION_SECONDS: Final = 600
MAX_EXPIRATION_SECONDS: Final = 1 << 32
#: The kubelet's projected-token request that kube-apiserver silently extends to a year
#: (``--service-account-extend-token-expiration``, on by default), warning after the hour.
WARN_ONLY_EXPIRATION_SECONDS: Final = 3607
EXTENDED_EXPIRATION_SECONDS: Final = 365 * 24 * 3600
#: go-jose's clock leeway for ``exp``/``nbf``, also the grace for deleted bound objects.
LEEWAY_SECONDS: Final = 60

EXTRA_POD_NAME: Final = "authentication.kubernetes.io/pod-name"
EXTRA_POD_UID: Final = "authentication.kubernetes.io/pod-uid"
EXTRA_NODE_NAME: Final = "authentication.kubernetes.io/node-name"
EXTRA_NODE_UID: Final = "authentication.kubernetes.io/node-uid"
EXTRA_CREDENTIAL_ID: Final = "authentication.kubernetes.io/credential-id"

_LEGACY_NS: Final = "kubernetes.io/serviceaccount/namespace"
_LEGACY_SECRET: Final = "kubernetes.io/serviceaccount/secret.name"
_LEGACY_SA_NAME: Final = "kubernetes.io/serviceaccount/service-account.name"
_LEGACY_SA_UID: Final = "kubernetes.io/serviceaccount/service-account.uid"


def service_account_username(namespace: str, name: str) -> str:
    """``system:serviceaccount:NS:NAME``."""
    return f"{SA_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups of a ServiceAccount user, ``system:authenticated`` included."""
    return (SA_GROUP, f"{SA_GROUP}:{namespace}", AUTHENTICATED_GROUP)


@dataclass(frozen=True)
class TokenSigner:
    """The ServiceAccount signing key and the issuer's identity: ``--service-account-issuer``
    and ``--api-audiences`` (which default to the issuer)."""

    private_key_pem: bytes
    issuer: str = DEFAULT_ISSUER
    api_audiences: tuple[str, ...] = (DEFAULT_ISSUER,)
    _key: rsa.RSAPrivateKey = field(init=False, repr=False, compare=False)
    _kid: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        key = serialization.load_pem_private_key(self.private_key_pem, password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise TypeError("ServiceAccount tokens need an RSA signing key")
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_kid", key_id(key.public_key()))

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        """The verification key."""
        return self._key.public_key()

    @property
    def key_id(self) -> str:
        """The ``kid`` header of every token this signer makes."""
        return self._kid

    def sign(self, claims: Mapping[str, Any]) -> str:
        """``claims`` as an RS256 JWT."""
        return jwt.encode(dict(claims), self._key, algorithm="RS256", headers={"kid": self._kid})


def key_id(public_key: rsa.RSAPublicKey) -> str:
    """kube-apiserver's ``kid``: unpadded base64url of the SHA-256 of the DER public key."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def meta_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj.metadata``, or an empty mapping."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def legacy_token(signer: TokenSigner, sa: Object, secret_name: str, cluster: str) -> str:
    """A legacy Secret-based token for ServiceAccount ``sa``, stored in Secret ``secret_name``."""
    meta = meta_of(sa)
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    return signer.sign(
        {
            "iss": LEGACY_ISSUER,
            _LEGACY_NS: namespace,
            _LEGACY_SECRET: secret_name,
            _LEGACY_SA_NAME: name,
            _LEGACY_SA_UID: str(meta.get("uid", "")),
            "sub": service_account_username(namespace, name),
            CLUSTER_CLAIM: cluster,
        }
    )


def rfc3339(epoch: float) -> str:
    """``epoch`` as a ``metav1.Time`` (RFC 3339, seconds, ``Z``)."""
    moment = datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _deleted(obj: Mapping[str, Any], before: float | None) -> bool:
    """Whether ``obj`` is being deleted (since before ``before``, when given)."""
    stamp = meta_of(obj).get("deletionTimestamp")
    if not stamp:
        return False
    if before is None:
        return True
    moment = _parse_time(stamp)
    return moment is None or moment < before


_SIGNED_CACHE_SIZE: Final = 4096


@dataclass(frozen=True)
class TokenValidator:
    """Checks ServiceAccount JWTs against the signing key, the issuer, the API audiences, the
    cluster they were issued in, and the objects they name (``lookup``)."""

    public_key: rsa.RSAPublicKey
    issuer: str = DEFAULT_ISSUER
    api_audiences: tuple[str, ...] = (DEFAULT_ISSUER,)
    # token -> its claims, once the signature verified: a signed token's claims never change,
    # and decoding is most of the cost of a request (the checks of time and of the objects the
    # token names still run on every request).
    _signed: dict[str, Mapping[str, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _claims(self, token: str) -> Mapping[str, Any] | None:
        claims = self._signed.get(token)
        if claims is not None:
            return claims
        try:
            # One key signs both kinds of token, so one verified decode serves both; the time
            # claims are checked by the caller against ``now`` with upstream's leeway.
            claims = jwt.decode(
                token,
                self.public_key,
                algorithms=["RS256"],
                options={
                    "verify_aud": False,
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError:
            return None
        if len(self._signed) >= _SIGNED_CACHE_SIZE:
            self._signed.clear()
        self._signed[token] = claims
        return claims

    def validate(
        self, token: str, cluster: str, lookup: Lookup, now: float | None = None
    ) -> UserInfo | None:
        """The ServiceAccount user of ``token``, or None when it is no valid token here."""
        now = time.time() if now is None else now
        claims = self._claims(token)
        if claims is None:
            return None
        issuer = claims.get("iss")
        if issuer not in (self.issuer, LEGACY_ISSUER):
            return None
        if claims.get(CLUSTER_CLAIM) != cluster:
            return None
        if issuer == LEGACY_ISSUER:
            return _validate_legacy(token, claims, lookup)
        return self._validate_bound(claims, lookup, now)

    def _validate_bound(
        self, claims: Mapping[str, Any], lookup: Lookup, now: float
    ) -> UserInfo | None:
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if not isinstance(exp, int | float) or now > exp + LEEWAY_SECONDS:
            return None
        if isinstance(nbf, int | float) and now < nbf - LEEWAY_SECONDS:
            return None
        aud = claims.get("aud")
        auds = [aud] if isinstance(aud, str) else list(aud or [])
        if not set(auds) & set(self.api_audiences):
            return None
        private = claims.get("kubernetes.io")
        if not isinstance(private, Mapping):
            return None
        namespace = str(private.get("namespace", ""))
        sa_ref = private.get("serviceaccount") or {}
        name, sa_uid = str(sa_ref.get("name", "")), str(sa_ref.get("uid", ""))
        if not namespace or not name:
            return None
        cutoff = now - LEEWAY_SECONDS
        sa = lookup("serviceaccounts", namespace, name)
        if sa is None or _deleted(sa, cutoff) or str(meta_of(sa).get("uid", "")) != sa_uid:
            return None
        extra: dict[str, tuple[str, ...]] = {}
        for kind, resource in (("secret", "secrets"), ("pod", "pods")):
            ref = private.get(kind)
            if not isinstance(ref, Mapping):
                continue
            bound = lookup(resource, namespace, str(ref.get("name", "")))
            if bound is None or _deleted(bound, cutoff):
                return None
            if str(meta_of(bound).get("uid", "")) != str(ref.get("uid", "")):
                return None
            if kind == "pod":
                extra[EXTRA_POD_NAME] = (str(ref.get("name", "")),)
                extra[EXTRA_POD_UID] = (str(ref.get("uid", "")),)
        node_ref = private.get("node")
        if isinstance(node_ref, Mapping):
            node_name, node_uid = str(node_ref.get("name", "")), str(node_ref.get("uid", ""))
            if "pod" not in private:
                node = lookup("nodes", "", node_name)
                if node is None or _deleted(node, cutoff):
                    return None
                if str(meta_of(node).get("uid", "")) != node_uid:
                    return None
            extra[EXTRA_NODE_NAME] = (node_name,)
            if node_uid:
                extra[EXTRA_NODE_UID] = (node_uid,)
        jti = claims.get("jti")
        if isinstance(jti, str) and jti:
            extra[EXTRA_CREDENTIAL_ID] = (f"JTI={jti}",)
        return UserInfo(
            name=service_account_username(namespace, name),
            groups=service_account_groups(namespace),
            uid=sa_uid,
            extra=extra,
        )


def _validate_legacy(token: str, claims: Mapping[str, Any], lookup: Lookup) -> UserInfo | None:
    namespace = str(claims.get(_LEGACY_NS) or "")
    secret_name = str(claims.get(_LEGACY_SECRET) or "")
    name = str(claims.get(_LEGACY_SA_NAME) or "")
    sa_uid = str(claims.get(_LEGACY_SA_UID) or "")
    if not (namespace and secret_name and name and sa_uid):
        return None
    if claims.get("sub") != service_account_username(namespace, name):
        return None
    secret = lookup("secrets", namespace, secret_name)
    if secret is None or _deleted(secret, None):
        return None
    labels = meta_of(secret).get("labels") or {}
    if INVALID_SINCE_LABEL in labels:
        return None
    stored = (secret.get("data") or {}).get("token", "")
    try:
        stored_token = base64.b64decode(str(stored), validate=True)
    except ValueError:
        return None
    # Constant time: the comparison must not tell an attacker how much of a guess was right.
    if not hmac.compare_digest(stored_token, token.encode()):
        return None
    sa = lookup("serviceaccounts", namespace, name)
    if sa is None or _deleted(sa, None) or str(meta_of(sa).get("uid", "")) != sa_uid:
        return None
    return UserInfo(
        name=service_account_username(namespace, name),
        groups=service_account_groups(namespace),
        uid=sa_uid,
    )


def _b64url_uint(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def openid_configuration(signer: TokenSigner) -> Object:
    """``/.well-known/openid-configuration``: the ServiceAccount issuer's discovery document,
    its ``jwks_uri`` the issuer's host with ``/openid/v1/jwks`` (no
    ``--service-account-jwks-uri``)."""
    scheme, sep, rest = signer.issuer.partition("://")
    host = rest.split("/", 1)[0]
    base = f"{scheme}{sep}{host}" if sep else signer.issuer.rstrip("/")
    return {
        "issuer": signer.issuer,
        "jwks_uri": f"{base}/openid/v1/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }


def jwks(signer: TokenSigner) -> Object:
    """``/openid/v1/jwks``: the verification key as a JSON Web Key Set."""
    numbers = signer.public_key.public_numbers()
    key = {
        "use": "sig",
        "kty": "RSA",
        "kid": signer.key_id,
        "alg": "RS256",
        "n": _b64url_uint(numbers.n),
        "e": _b64url_uint(numbers.e),
    }
    return {"keys": [key]}
