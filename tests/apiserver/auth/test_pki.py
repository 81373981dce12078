"""The PKI on disk: what first start creates, what a restart reuses or renews, the one-line
errors for unusable files, and kubeconfigs kubectl can read."""

from __future__ import annotations

import base64
import datetime
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from numaplane.apiserver.auth.certs import issue_certificate
from numaplane.apiserver.auth.pki import (
    PkiError,
    ensure_pki,
    issue_client_certificate,
    server_ssl_context,
    write_kubeconfig,
)


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _sans(cert: x509.Certificate) -> set[str]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(ip) for ip in san.get_values_for_type(x509.IPAddress)} | set(
        san.get_values_for_type(x509.DNSName)
    )


def test_first_start_creates_the_files_with_private_keys_0600(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, ["10.1.2.3"])
    assert pki.dir == tmp_path / "pki"
    assert stat.S_IMODE(pki.dir.stat().st_mode) == 0o700
    for name in ("ca.key", "apiserver.key", "admin.key", "sa.key"):
        assert stat.S_IMODE((pki.dir / name).stat().st_mode) == 0o600, name
    for name in ("ca.crt", "apiserver.crt", "admin.crt", "sa.pub"):
        assert (pki.dir / name).is_file(), name
    assert not list(pki.dir.glob("*.tmp"))


def test_the_ca_lives_ten_years_and_signs_the_leaves(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, [])
    ca = _cert(pki.ca_cert_path)
    life = ca.not_valid_after_utc - ca.not_valid_before_utc
    assert datetime.timedelta(days=3649) < life < datetime.timedelta(days=3651)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    serving = _cert(pki.serving_cert_path)
    serving.verify_directly_issued_by(ca)
    admin = x509.load_pem_x509_certificate(pki.admin_cert_pem)
    admin.verify_directly_issued_by(ca)


def test_serving_certificate_covers_loopback_localhost_and_the_bind_address(
    tmp_path: Path,
) -> None:
    pki = ensure_pki(tmp_path, ["192.168.7.9", "0.0.0.0", "myhost.example"])
    cert = _cert(pki.serving_cert_path)
    sans = _sans(cert)
    assert {"127.0.0.1", "::1", "localhost", "192.168.7.9", "myhost.example"} <= sans
    assert "kubernetes.default.svc" in sans
    # The unspecified address is where the server listens, never what a client dials.
    assert "0.0.0.0" not in sans
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in usages


def test_admin_certificate_is_kubernetes_admin_in_system_masters(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, [])
    cert = x509.load_pem_x509_certificate(pki.admin_cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "kubernetes-admin"
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    assert orgs == ["system:masters"]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in usages


def test_restart_reuses_everything(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path, ["10.0.0.1"])
    serving = first.serving_cert_path.read_bytes()
    second = ensure_pki(tmp_path, ["10.0.0.1"])
    assert second == first
    assert second.serving_cert_path.read_bytes() == serving


def test_a_new_bind_address_reissues_only_the_serving_certificate(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path, ["10.0.0.1"])
    second = ensure_pki(tmp_path, ["10.0.0.2"])
    assert second.ca_cert_pem == first.ca_cert_pem
    assert second.admin_cert_pem == first.admin_cert_pem
    assert second.sa_key_pem == first.sa_key_pem
    assert "10.0.0.2" in _sans(_cert(second.serving_cert_path))


def test_leaves_signed_by_another_ca_are_reissued(tmp_path: Path) -> None:
    ensure_pki(tmp_path / "a", [])
    other = ensure_pki(tmp_path / "b", [])
    for name in ("admin.crt", "admin.key"):
        (tmp_path / "a" / "pki" / name).write_bytes((other.dir / name).read_bytes())
    again = ensure_pki(tmp_path / "a", [])
    ca = x509.load_pem_x509_certificate(again.ca_cert_pem)
    x509.load_pem_x509_certificate(again.admin_cert_pem).verify_directly_issued_by(ca)


@dataclass(frozen=True)
class BadFile:
    name: str
    file: str
    content: bytes | None  # None: delete the file
    message: str


BAD_FILES = [
    BadFile("corrupt CA certificate", "ca.crt", b"garbage", "ca.crt: not a PEM certificate"),
    BadFile(
        "corrupt CA key", "ca.key", b"-----BEGIN", "ca.key: not an unencrypted PEM private key"
    ),
    BadFile("CA key missing", "ca.key", None, "ca.key: missing (its pair ca.crt is present)"),
    BadFile(
        "serving certificate missing",
        "apiserver.crt",
        None,
        "apiserver.crt: missing (its pair apiserver.key is present)",
    ),
    BadFile("corrupt admin certificate", "admin.crt", b"x", "admin.crt: not a PEM certificate"),
    BadFile("corrupt signing key", "sa.key", b"x", "sa.key: not an unencrypted PEM private key"),
]


@pytest.mark.parametrize("case", BAD_FILES, ids=[c.name for c in BAD_FILES])
def test_an_unusable_file_is_a_one_line_error_naming_it(tmp_path: Path, case: BadFile) -> None:
    ensure_pki(tmp_path, [])
    path = tmp_path / "pki" / case.file
    before = {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()}
    if case.content is None:
        path.unlink()
    else:
        path.write_bytes(case.content)
    with pytest.raises(PkiError) as info:
        ensure_pki(tmp_path, [])
    message = str(info.value)
    assert message == str(path.parent / case.message)
    assert "\n" not in message
    # Nothing else was replaced: the CA in particular survives a bad neighbour.
    if case.file != "ca.crt":
        assert (tmp_path / "pki" / "ca.crt").read_bytes() == before["ca.crt"]


def test_a_key_that_does_not_match_its_certificate_is_refused(tmp_path: Path) -> None:
    ensure_pki(tmp_path / "a", [])
    other = ensure_pki(tmp_path / "b", [])
    (tmp_path / "a" / "pki" / "ca.key").write_bytes((other.dir / "ca.key").read_bytes())
    with pytest.raises(PkiError, match=r"ca\.key: does not match the certificate .*ca\.crt"):
        ensure_pki(tmp_path / "a", [])


def test_unreadable_file_is_named(tmp_path: Path) -> None:
    ensure_pki(tmp_path, [])
    path = tmp_path / "pki" / "ca.crt"
    path.unlink()
    path.mkdir()  # a directory where the certificate should be: reading it fails
    with pytest.raises(PkiError, match=r"ca\.crt: cannot read: Is a directory"):
        ensure_pki(tmp_path, [])


@dataclass(frozen=True)
class KubeconfigCase:
    name: str
    server: str
    cluster: str


KUBECONFIGS = [
    KubeconfigCase("default cluster", "https://127.0.0.1:6443", "kubernetes"),
    KubeconfigCase("logical cluster", "https://127.0.0.1:6443/clusters/w1", "w1"),
]


@pytest.mark.parametrize("case", KUBECONFIGS, ids=[c.name for c in KUBECONFIGS])
def test_kubeconfig_embeds_ca_and_admin_credentials(tmp_path: Path, case: KubeconfigCase) -> None:
    pki = ensure_pki(tmp_path, [])
    path = tmp_path / f"{case.cluster}.kubeconfig"
    write_kubeconfig(path, case.server, pki, case.cluster)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    config = yaml.safe_load(path.read_text())
    assert config["kind"] == "Config"
    [cluster] = config["clusters"]
    assert cluster["name"] == case.cluster
    assert cluster["cluster"]["server"] == case.server
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == pki.ca_cert_pem
    [user] = config["users"]
    assert user["name"] == "kubernetes-admin"
    assert base64.b64decode(user["user"]["client-certificate-data"]) == pki.admin_cert_pem
    assert base64.b64decode(user["user"]["client-key-data"]) == pki.admin_key_pem
    [context] = config["contexts"]
    assert config["current-context"] == context["name"] == f"kubernetes-admin@{case.cluster}"
    assert context["context"] == {"cluster": case.cluster, "user": "kubernetes-admin"}


def test_token_kubeconfig_carries_the_token_and_no_key(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, [])
    path = tmp_path / "sa.kubeconfig"
    write_kubeconfig(path, "https://localhost:6443", pki, "worker", "sa", token="abc.def.ghi")
    [user] = yaml.safe_load(path.read_text())["users"]
    assert user == {"name": "sa", "user": {"token": "abc.def.ghi"}}


def test_client_certificates_name_user_and_groups(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, [])
    cert_pem, _ = issue_client_certificate(pki, "alice", ["dev", "ops"])
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    assert orgs == ["dev", "ops"]
    assert not list(pki.dir.glob("alice*"))


def test_server_ssl_context_loads_the_serving_pair(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, [])
    ctx = server_ssl_context(pki)
    [ca] = ctx.get_ca_certs()
    assert "(('commonName', 'kubernetes'),)" in str(ca["subject"])


def test_a_certificate_near_its_end_is_renewed_and_the_ca_kept(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path, [])
    ca = x509.load_pem_x509_certificate(first.ca_cert_pem)
    ca_key = serialization.load_pem_private_key(first.ca_key_pem, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    short_cert, short_key = issue_certificate(
        ca,
        ca_key,
        "kubernetes-admin",
        ["system:masters"],
        validity=datetime.timedelta(days=10),
    )
    (first.dir / "admin.crt").write_bytes(short_cert)
    (first.dir / "admin.key").write_bytes(short_key)
    again = ensure_pki(tmp_path, [])
    assert again.ca_cert_pem == first.ca_cert_pem
    assert again.admin_cert_pem != short_cert
    renewed = x509.load_pem_x509_certificate(again.admin_cert_pem)
    assert renewed.not_valid_after_utc - renewed.not_valid_before_utc > datetime.timedelta(days=360)
