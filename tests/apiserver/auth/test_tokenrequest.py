"""The TokenRequest API: defaults, validation and binding errors worded as upstream's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import pytest

from numaplane.apiserver.auth.pki import ensure_pki
from numaplane.apiserver.auth.serviceaccount import TokenSigner, jwks, openid_configuration
from numaplane.apiserver.auth.tokenrequest import issue_token
from numaplane.apiserver.errors import StatusError

Object = dict[str, Any]
NOW = 1_800_000_000.0


@pytest.fixture(scope="module")
def signer(tmp_path_factory: pytest.TempPathFactory) -> TokenSigner:
    pki = ensure_pki(tmp_path_factory.mktemp("pki"), [])
    return TokenSigner(pki.sa_key_pem)


def _objects() -> dict[tuple[str, str, str], Object]:
    def meta(name: str, namespace: str = "ns") -> Object:
        return {"name": name, "namespace": namespace, "uid": f"uid-{name}"}

    return {
        ("serviceaccounts", "ns", "sa"): {"metadata": meta("sa")},
        ("pods", "ns", "p"): {
            "metadata": meta("p"),
            "spec": {"serviceAccountName": "sa", "nodeName": "n1"},
        },
        ("pods", "ns", "other-pod"): {
            "metadata": meta("other-pod"),
            "spec": {"serviceAccountName": "default"},
        },
        ("secrets", "ns", "s"): {"metadata": meta("s")},
        ("nodes", "", "n1"): {"metadata": meta("n1", "")},
    }


def _issue(signer: TokenSigner, body: Object, name: str = "sa") -> Object:
    objects = _objects()
    return issue_token(
        signer, "c", "ns", name, body, lambda gr, ns, n: objects.get((gr, ns, n)), NOW
    )


def _claims(signer: TokenSigner, out: Object) -> dict[str, Any]:
    return jwt.decode(
        out["status"]["token"],
        signer.public_key,
        algorithms=["RS256"],
        options={
            "verify_aud": False,
            "verify_exp": False,
            "verify_iat": False,
            "verify_nbf": False,
        },
    )


def test_defaults(signer: TokenSigner) -> None:
    out = _issue(signer, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"})
    assert out["kind"] == "TokenRequest"
    assert out["metadata"] == {
        "name": "sa",
        "namespace": "ns",
        "creationTimestamp": "2027-01-15T08:00:00Z",
    }
    assert out["spec"] == {
        "audiences": ["https://kubernetes.default.svc.cluster.local"],
        "expirationSeconds": 3600,
    }
    assert out["status"]["expirationTimestamp"] == "2027-01-15T09:00:00Z"
    claims = _claims(signer, out)
    assert claims["exp"] == int(NOW) + 3600
    assert claims["numaplane.io/cluster"] == "c"


def test_requested_audiences_and_duration(signer: TokenSigner) -> None:
    out = _issue(signer, {"spec": {"audiences": ["a", "b"], "expirationSeconds": 600}})
    assert out["spec"] == {"audiences": ["a", "b"], "expirationSeconds": 600}
    assert _claims(signer, out)["aud"] == ["a", "b"]


@dataclass(frozen=True)
class BindCase:
    name: str
    ref: Object
    claims: Object = field(default_factory=dict)


BINDS = [
    BindCase(
        "pod with its node",
        {"apiVersion": "v1", "kind": "Pod", "name": "p"},
        {"pod": {"name": "p", "uid": "uid-p"}, "node": {"name": "n1", "uid": "uid-n1"}},
    ),
    BindCase(
        "secret",
        {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "uid-s"},
        {"secret": {"name": "s", "uid": "uid-s"}},
    ),
    BindCase(
        "node",
        {"apiVersion": "v1", "kind": "Node", "name": "n1"},
        {"node": {"name": "n1", "uid": "uid-n1"}},
    ),
]


@pytest.mark.parametrize("case", BINDS, ids=[c.name for c in BINDS])
def test_bound_object_claims(signer: TokenSigner, case: BindCase) -> None:
    out = _issue(signer, {"spec": {"boundObjectRef": case.ref}})
    private = _claims(signer, out)["kubernetes.io"]
    assert {k: v for k, v in private.items() if k not in ("namespace", "serviceaccount")} == (
        case.claims
    )


def test_kubelet_hour_and_seven_seconds_is_extended_for_pods(signer: TokenSigner) -> None:
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p"}
    out = _issue(signer, {"spec": {"boundObjectRef": ref, "expirationSeconds": 3607}})
    claims = _claims(signer, out)
    assert claims["exp"] == int(NOW) + 365 * 24 * 3600
    assert claims["kubernetes.io"]["warnafter"] == int(NOW) + 3607
    # The status tells the requested expiry, as upstream's does.
    assert out["status"]["expirationTimestamp"] == "2027-01-15T09:00:07Z"


@dataclass(frozen=True)
class ErrorCase:
    name: str
    body: Object
    code: int
    message: str
    account: str = "sa"


ERRORS = [
    ErrorCase(
        "shorter than ten minutes",
        {"spec": {"expirationSeconds": 599}},
        422,
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 599: may not specify a duration less than 10 minutes",
    ),
    ErrorCase(
        "longer than 2^32 seconds",
        {"spec": {"expirationSeconds": (1 << 32) + 1}},
        422,
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
        "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
    ),
    ErrorCase(
        "name differs from the account",
        {"metadata": {"name": "x"}},
        422,
        'TokenRequest.authentication.k8s.io "sa" is invalid: metadata.name: Invalid value: '
        '"x": must match the service account name if specified',
    ),
    ErrorCase("no such account", {}, 404, 'serviceaccounts "ghost" not found', "ghost"),
    ErrorCase(
        "no such pod",
        {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "gone"}}},
        404,
        'pods "gone" not found',
    ),
    ErrorCase(
        "pod of another account",
        {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "other-pod"}}},
        400,
        'cannot bind token for serviceaccount "sa" to pod running with different '
        "serviceaccount name.",
    ),
    ErrorCase(
        "unbindable kind",
        {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}}},
        400,
        "cannot bind token to object of type /v1, Kind=ConfigMap",
    ),
    ErrorCase(
        "stale uid",
        {
            "spec": {
                "boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u0"}
            }
        },
        409,
        'Operation cannot be fulfilled on Secret "s": the UID in the bound object reference '
        "(u0) does not match the UID in record. The object might have been deleted and then "
        "recreated",
    ),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c.name for c in ERRORS])
def test_errors(signer: TokenSigner, case: ErrorCase) -> None:
    with pytest.raises(StatusError) as info:
        _issue(signer, case.body, case.account)
    assert (info.value.code, info.value.message) == (case.code, case.message)


def test_signer_refuses_a_non_rsa_key(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, [])
    with pytest.raises(TypeError, match="RSA"):
        TokenSigner(pki.admin_key_pem)


def test_issuer_discovery_documents_verify_issued_tokens(signer: TokenSigner) -> None:
    config = openid_configuration(signer)
    assert config["issuer"] == "https://kubernetes.default.svc.cluster.local"
    assert config["jwks_uri"] == "https://kubernetes.default.svc.cluster.local/openid/v1/jwks"
    [key] = jwks(signer)["keys"]
    assert (key["kid"], key["alg"], key["use"], key["e"]) == (signer.key_id, "RS256", "sig", "AQAB")
    token = _issue(signer, {})["status"]["token"]
    public = jwt.PyJWK(key).key
    claims = jwt.decode(
        token,
        public,
        algorithms=["RS256"],
        audience=config["issuer"],
        options={"verify_exp": False, "verify_iat": False, "verify_nbf": False},
    )
    assert claims["sub"] == "system:serviceaccount:ns:sa"


def test_kubectl_create_token_body(signer: TokenSigner) -> None:
    # What `kubectl create token sa` sends: every field, unset ones null.
    body = {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"audiences": None, "expirationSeconds": None, "boundObjectRef": None},
        "status": {"token": "", "expirationTimestamp": None},
    }
    out = _issue(signer, body)
    assert out["spec"] == {
        "audiences": ["https://kubernetes.default.svc.cluster.local"],
        "expirationSeconds": 3600,
    }
    assert out["metadata"]["creationTimestamp"] == "2027-01-15T08:00:00Z"
    assert out["status"]["token"].count(".") == 2
