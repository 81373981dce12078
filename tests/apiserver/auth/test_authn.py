"""Authentication: client certificates, the static token file, bearer headers, and who
ServiceAccount tokens (legacy and bound, real RS256 JWTs) authenticate as, and when not."""

from __future__ import annotations

import base64
import datetime
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from numaplane.apiserver.auth.authn import (
    Authenticator,
    TokenFileError,
    bearer_token,
    load_token_file,
    parse_token_file,
)
from numaplane.apiserver.auth.pki import Pki, ensure_pki, issue_client_certificate
from numaplane.apiserver.auth.serviceaccount import TokenSigner
from numaplane.apiserver.auth.tokenrequest import fill_service_account_token_secret, issue_token
from numaplane.apiserver.user import UserInfo

Object = dict[str, Any]


class Objects:
    """A dictionary of stored objects answering the authenticator's ``lookup``."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Object] = {}

    def put(self, resource: str, namespace: str, name: str, **extra: Any) -> Object:
        obj: Object = {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"}}
        obj.update(extra)
        self.objects[(resource, namespace, name)] = obj
        return obj

    def __call__(self, resource: str, namespace: str, name: str) -> Object | None:
        return self.objects.get((resource, namespace, name))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return ensure_pki(tmp_path_factory.mktemp("pki"), [])


@pytest.fixture(scope="module")
def signer(pki: Pki) -> TokenSigner:
    return TokenSigner(pki.sa_key_pem)


def _der(pem: bytes) -> bytes:
    return x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


def test_admin_certificate_authenticates_as_master(pki: Pki) -> None:
    auth = Authenticator.create(pki.ca_cert_pem)
    user = auth.authenticate(_der(pki.admin_cert_pem), None, "c", Objects())
    assert user == UserInfo("kubernetes-admin", ("system:masters", "system:authenticated"))


def test_client_certificate_cn_is_the_user_and_o_the_groups(pki: Pki) -> None:
    cert, _ = issue_client_certificate(pki, "alice", ["dev", "system:authenticated"])
    user = Authenticator.create(pki.ca_cert_pem).authenticate(_der(cert), None, "c", Objects())
    # system:authenticated is not added twice.
    assert user == UserInfo("alice", ("dev", "system:authenticated"))


def test_certificate_of_another_ca_is_refused(pki: Pki, tmp_path: Path) -> None:
    stranger = ensure_pki(tmp_path, [])
    auth = Authenticator.create(pki.ca_cert_pem)
    assert auth.authenticate(_der(stranger.admin_cert_pem), None, "c", Objects()) is None


def test_expired_certificate_is_refused(pki: Pki) -> None:
    later = time.time() + 2 * 365 * 24 * 3600
    auth = Authenticator.create(pki.ca_cert_pem)
    assert auth.authenticate(_der(pki.admin_cert_pem), None, "c", Objects(), now=later) is None


def _self_built(pki: Pki, *, cn: str, usage: x509.ObjectIdentifier) -> bytes:
    ca = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    ca_key = serialization.load_pem_private_key(pki.ca_key_pem, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] if cn else []
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(attrs))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)


def test_server_only_certificate_cannot_authenticate_a_client(pki: Pki) -> None:
    der = _self_built(pki, cn="mallory", usage=ExtendedKeyUsageOID.SERVER_AUTH)
    assert Authenticator.create(pki.ca_cert_pem).authenticate(der, None, "c", Objects()) is None


def test_certificate_without_common_name_names_nobody(pki: Pki) -> None:
    der = _self_built(pki, cn="", usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    assert Authenticator.create(pki.ca_cert_pem).authenticate(der, None, "c", Objects()) is None


def test_no_credentials_is_anonymous(pki: Pki) -> None:
    assert Authenticator.create(pki.ca_cert_pem).authenticate(None, None, "c", Objects()) is None


@dataclass(frozen=True)
class BearerCase:
    name: str
    header: str | None
    token: str | None


BEARERS = [
    BearerCase("plain", "Bearer abc", "abc"),
    BearerCase("scheme is case-insensitive", "bearer abc", "abc"),
    BearerCase("surrounding space trimmed", "  Bearer abc  ", "abc"),
    BearerCase("two spaces: an empty token", "Bearer  abc", ""),
    BearerCase("trailing space trimmed to the scheme alone", "Bearer ", None),
    BearerCase("basic auth is no bearer", "Basic dXNlcjpwdw==", None),
    BearerCase("scheme alone", "Bearer", None),
    BearerCase("no header", None, None),
]


@pytest.mark.parametrize("case", BEARERS, ids=[c.name for c in BEARERS])
def test_bearer_header(case: BearerCase) -> None:
    assert bearer_token(case.header) == case.token


@dataclass(frozen=True)
class TokenFileCase:
    name: str
    text: str
    users: dict[str, UserInfo] = field(default_factory=dict)
    error: str = ""


TOKEN_FILES = [
    TokenFileCase(
        "three columns",
        "t1,alice,1001\n",
        {"t1": UserInfo("alice", (), "1001")},
    ),
    TokenFileCase(
        "quoted groups",
        't1,bob,1002,"dev,ops"\n',
        {"t1": UserInfo("bob", ("dev", "ops"), "1002")},
    ),
    TokenFileCase(
        "one unquoted group, blank lines skipped",
        "\nt1,carol,7,admins\n\n",
        {"t1": UserInfo("carol", ("admins",), "7")},
    ),
    TokenFileCase(
        "quotes escaped by doubling",
        't1,"da""ve",8\n',
        {"t1": UserInfo('da"ve', (), "8")},
    ),
    TokenFileCase(
        "empty token skipped", ",erin,9\nt2,frank,10", {"t2": UserInfo("frank", (), "10")}
    ),
    TokenFileCase(
        "repeated token keeps the last",
        "t1,a,1\nt1,b,2\n",
        {"t1": UserInfo("b", (), "2")},
    ),
    TokenFileCase(
        "two columns",
        "t1,alice\n",
        error="token file 'F' must have at least 3 columns (token, user name, user uid), found 2",
    ),
    TokenFileCase(
        "bare quote",
        't1,al"ice,1\n',
        error='F: parse error on line 1, column 6: bare " in non-quoted-field',
    ),
    TokenFileCase(
        "unterminated quote",
        't1,alice,1\nt2,"bob,2\n',
        error='F: parse error on line 2, column 11: extraneous or missing " in quoted-field',
    ),
    TokenFileCase(
        "unterminated quote over two lines",
        't1,a,1\nt2,"bob\nx,2\n',
        error='F: record on line 2; parse error on line 3, column 5: extraneous or missing " '
        "in quoted-field",
    ),
    TokenFileCase(
        "text after a closing quote",
        't1,"a"b,1\n',
        error='F: parse error on line 1, column 6: extraneous or missing " in quoted-field',
    ),
    TokenFileCase(
        "quoted line break and CRLF endings",
        't1,"multi\r\nline",1\r\nt2,b,2\r\n',
        {"t1": UserInfo("multi\nline", (), "1"), "t2": UserInfo("b", (), "2")},
    ),
]


@pytest.mark.parametrize("case", TOKEN_FILES, ids=[c.name for c in TOKEN_FILES])
def test_token_file(case: TokenFileCase) -> None:
    if case.error:
        with pytest.raises(TokenFileError) as info:
            parse_token_file(case.text, "F")
        assert str(info.value) == case.error
    else:
        assert parse_token_file(case.text, "F") == case.users


def test_unreadable_token_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match=r"tokens\.csv: cannot read the token file"):
        load_token_file(tmp_path / "tokens.csv")


def test_static_token_authenticates(pki: Pki, tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('s3cret,bob,1002,"dev,ops"\n')
    auth = Authenticator.create(pki.ca_cert_pem, tokens=load_token_file(path))
    user = auth.authenticate(None, "Bearer s3cret", "c", Objects())
    assert user == UserInfo("bob", ("dev", "ops", "system:authenticated"), "1002")
    assert auth.authenticate(None, "Bearer wrong", "c", Objects()) is None
    assert auth.authenticate(None, "Bearer  s3cret", "c", Objects()) is None


def _sa_world() -> Objects:
    objects = Objects()
    objects.put("serviceaccounts", "kueue-system", "multikueue-sa")
    return objects


def _bound_token(signer: TokenSigner, objects: Objects, cluster: str = "c", **spec: Any) -> str:
    body = {"spec": spec} if spec else {}
    result = issue_token(signer, cluster, "kueue-system", "multikueue-sa", body, objects)
    return str(result["status"]["token"])


SA_USER = "system:serviceaccount:kueue-system:multikueue-sa"
SA_GROUPS = (
    "system:serviceaccounts",
    "system:serviceaccounts:kueue-system",
    "system:authenticated",
)


def test_bound_token_authenticates_as_the_service_account(pki: Pki, signer: TokenSigner) -> None:
    objects = _sa_world()
    token = _bound_token(signer, objects)
    auth = Authenticator.create(pki.ca_cert_pem, signer=signer)
    user = auth.authenticate(None, f"Bearer {token}", "c", objects)
    assert user is not None
    assert (user.name, user.groups, user.uid) == (SA_USER, SA_GROUPS, "uid-multikueue-sa")
    [credential] = user.extra["authentication.kubernetes.io/credential-id"]
    assert credential == "JTI=" + jwt.decode(token, options={"verify_signature": False})["jti"]


def test_bound_token_claims_are_upstreams(signer: TokenSigner) -> None:
    objects = _sa_world()
    token = _bound_token(signer, objects)
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "RS256"
    assert header["kid"] == signer.key_id
    claims = jwt.decode(token, signer.public_key, algorithms=["RS256"], audience=signer.issuer)
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert claims["sub"] == SA_USER
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["nbf"] == claims["iat"]
    assert claims["kubernetes.io"] == {
        "namespace": "kueue-system",
        "serviceaccount": {"name": "multikueue-sa", "uid": "uid-multikueue-sa"},
    }


@dataclass(frozen=True)
class RefusedToken:
    name: str
    change: str


REFUSED = [
    RefusedToken("issued in another logical cluster", "cluster"),
    RefusedToken("service account deleted", "delete-sa"),
    RefusedToken("service account recreated (new uid)", "recreate-sa"),
    RefusedToken("service account being deleted for over a minute", "terminating-sa"),
    RefusedToken("expired", "expired"),
    RefusedToken("audience of another server", "audience"),
    RefusedToken("signature tampered", "tamper"),
    RefusedToken("signed by another key", "other-key"),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c.name for c in REFUSED])
def test_bound_token_refused(pki: Pki, signer: TokenSigner, case: RefusedToken) -> None:
    objects = _sa_world()
    spec: dict[str, Any] = {}
    if case.change == "audience":
        spec["audiences"] = ["https://elsewhere"]
    token = _bound_token(signer, objects, **spec)
    cluster, now = "c", time.time()
    sa_key = ("serviceaccounts", "kueue-system", "multikueue-sa")
    if case.change == "cluster":
        cluster = "other"
    elif case.change == "delete-sa":
        del objects.objects[sa_key]
    elif case.change == "recreate-sa":
        objects.objects[sa_key]["metadata"]["uid"] = "uid-new"
    elif case.change == "terminating-sa":
        objects.objects[sa_key]["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    elif case.change == "expired":
        now += 3600 + 61
    elif case.change == "tamper":
        head, body, sig = token.split(".")
        claims = jwt.decode(token, options={"verify_signature": False})
        claims["sub"] = "system:serviceaccount:kube-system:admin"
        body = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        token = f"{head}.{body}.{sig}"
    elif case.change == "other-key":
        token = _bound_token(TokenSigner(_other_signing_key()), objects)
    auth = Authenticator.create(pki.ca_cert_pem, signer=signer)
    assert auth.authenticate(None, f"Bearer {token}", cluster, objects, now=now) is None


def _other_signing_key() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def test_token_within_leeway_after_expiry_still_authenticates(
    pki: Pki, signer: TokenSigner
) -> None:
    objects = _sa_world()
    token = _bound_token(signer, objects)
    auth = Authenticator.create(pki.ca_cert_pem, signer=signer)
    later = time.time() + 3600 + 30
    assert auth.authenticate(None, f"Bearer {token}", "c", objects, now=later) is not None


def test_pod_bound_token_dies_with_its_pod(pki: Pki, signer: TokenSigner) -> None:
    objects = _sa_world()
    objects.put("pods", "kueue-system", "p", spec={"serviceAccountName": "multikueue-sa"})
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p"}
    token = _bound_token(signer, objects, boundObjectRef=ref)
    auth = Authenticator.create(pki.ca_cert_pem, signer=signer)
    user = auth.authenticate(None, f"Bearer {token}", "c", objects)
    assert user is not None
    assert user.extra["authentication.kubernetes.io/pod-name"] == ("p",)
    assert user.extra["authentication.kubernetes.io/pod-uid"] == ("uid-p",)
    objects.put("pods", "kueue-system", "p", spec={"serviceAccountName": "multikueue-sa"})
    objects.objects[("pods", "kueue-system", "p")]["metadata"]["uid"] = "uid-recreated"
    assert auth.authenticate(None, f"Bearer {token}", "c", objects) is None
    del objects.objects[("pods", "kueue-system", "p")]
    assert auth.authenticate(None, f"Bearer {token}", "c", objects) is None


def _legacy_world(signer: TokenSigner, ca_pem: bytes, cluster: str = "c") -> tuple[Objects, str]:
    objects = _sa_world()
    sa = objects("serviceaccounts", "kueue-system", "multikueue-sa")
    assert sa is not None
    secret = objects.put(
        "secrets",
        "kueue-system",
        "multikueue-sa-token",
        type="kubernetes.io/service-account-token",
    )
    secret["metadata"]["annotations"] = {"kubernetes.io/service-account.name": "multikueue-sa"}
    filled = fill_service_account_token_secret(
        secret, sa, ca_pem, "kueue-system", signer=signer, cluster=cluster
    )
    objects.objects[("secrets", "kueue-system", "multikueue-sa-token")] = filled
    return objects, base64.b64decode(filled["data"]["token"]).decode()


def test_secret_token_authenticates_while_the_secret_holds_it(
    pki: Pki, signer: TokenSigner
) -> None:
    objects, token = _legacy_world(signer, pki.ca_cert_pem)
    auth = Authenticator.create(pki.ca_cert_pem, signer=signer)
    user = auth.authenticate(None, f"Bearer {token}", "c", objects)
    assert user == UserInfo(SA_USER, SA_GROUPS, "uid-multikueue-sa")
    assert auth.authenticate(None, f"Bearer {token}", "other", objects) is None
    secret = objects.objects[("secrets", "kueue-system", "multikueue-sa-token")]
    secret["data"]["token"] = base64.b64encode(b"x.y.z").decode()
    assert auth.authenticate(None, f"Bearer {token}", "c", objects) is None
    del objects.objects[("secrets", "kueue-system", "multikueue-sa-token")]
    assert auth.authenticate(None, f"Bearer {token}", "c", objects) is None


def test_secret_token_claims_are_upstreams(pki: Pki, signer: TokenSigner) -> None:
    _, token = _legacy_world(signer, pki.ca_cert_pem)
    claims = jwt.decode(token, signer.public_key, algorithms=["RS256"])
    assert claims["iss"] == "kubernetes/serviceaccount"
    assert claims["sub"] == SA_USER
    assert claims["kubernetes.io/serviceaccount/namespace"] == "kueue-system"
    assert claims["kubernetes.io/serviceaccount/secret.name"] == "multikueue-sa-token"
    assert claims["kubernetes.io/serviceaccount/service-account.name"] == "multikueue-sa"
    assert claims["kubernetes.io/serviceaccount/service-account.uid"] == "uid-multikueue-sa"
    assert "exp" not in claims


def test_filled_secret_carries_token_ca_and_namespace(pki: Pki, signer: TokenSigner) -> None:
    objects, token = _legacy_world(signer, pki.ca_cert_pem)
    secret = objects.objects[("secrets", "kueue-system", "multikueue-sa-token")]
    assert base64.b64decode(secret["data"]["ca.crt"]) == pki.ca_cert_pem
    assert base64.b64decode(secret["data"]["namespace"]) == b"kueue-system"
    assert token.count(".") == 2
    annotations = secret["metadata"]["annotations"]
    assert annotations["kubernetes.io/service-account.uid"] == "uid-multikueue-sa"
    assert annotations["kubernetes.io/service-account.name"] == "multikueue-sa"
