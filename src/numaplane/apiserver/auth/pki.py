"""The server's certificates and keys, created on first start and reused after, as a kubeadm
control plane keeps them in ``/etc/kubernetes/pki``: a CA, the serving certificate, the admin
client certificate (``O=system:masters``) and the ServiceAccount token signing key; plus the
kubeconfig files that carry them to kubectl.

This module is the auth package's only file I/O. Keys are written ``0600`` in a ``0700``
directory, each file atomically (a crash leaves the old file or the new one, never half of
one). A file that exists but cannot be read or parsed is a :class:`PkiError` naming it, never
silently replaced: replacing the CA would lock every issued credential out.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificateIssuerPrivateKeyTypes,
    PrivateKeyTypes,
)

from numaplane.apiserver.auth.certs import (
    ADMIN_GROUP,
    ADMIN_USER,
    SERVING_COMMON_NAME,
    cert_pem,
    covers,
    fresh,
    issue_certificate,
    key_pem,
    new_ca,
    public_der,
    serving_hosts,
    signs,
    subject_name,
)
from numaplane.apiserver.auth.kubeconfig import kubeconfig
from numaplane.errors import NumaplaneError


#: kubeadm's lifetimes: the CA ten years, leaf certificates one year.
class PkiError(NumaplaneError):
    """A certificate or key file that cannot be used; one line naming the file."""


@dataclass(frozen=True)
class Pki:
    """The server's credentials: the paths of every file, and the PEM bytes callers pass on
    (kubeconfig data, ``ca.crt`` in ServiceAccount token Secrets, the token signing key)."""

    dir: Path
    ca_cert_pem: bytes
    ca_key_pem: bytes
    serving_cert_path: Path
    serving_key_path: Path
    admin_cert_pem: bytes
    admin_key_pem: bytes
    sa_key_pem: bytes
    sa_public_pem: bytes

    @property
    def ca_cert_path(self) -> Path:
        """``DIR/pki/ca.crt``."""
        return self.dir / "ca.crt"


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise PkiError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _load_cert(path: Path) -> x509.Certificate:
    data = _read(path)
    try:
        return x509.load_pem_x509_certificate(data)
    except ValueError as exc:
        raise PkiError(f"{path}: not a PEM certificate") from exc


def _load_key(path: Path) -> PrivateKeyTypes:
    data = _read(path)
    try:
        return serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise PkiError(f"{path}: not an unencrypted PEM private key") from exc


def _load_pair(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, PrivateKeyTypes]:
    cert = _load_cert(cert_path)
    key = _load_key(key_path)
    if public_der(key) != cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ):
        raise PkiError(f"{key_path}: does not match the certificate {cert_path}")
    return cert, key


def _pair_state(cert_path: Path, key_path: Path) -> bool:
    """Whether the pair exists; exactly one of the two files present is an error."""
    cert_there, key_there = cert_path.exists(), key_path.exists()
    if cert_there != key_there:
        missing, present = (key_path, cert_path) if cert_there else (cert_path, key_path)
        raise PkiError(f"{missing}: missing (its pair {present.name} is present)")
    return cert_there


def _ensure_leaf(
    cert_path: Path,
    key_path: Path,
    ca: x509.Certificate,
    ca_key: CertificateIssuerPrivateKeyTypes,
    common_name: str,
    organizations: Sequence[str],
    hosts: Sequence[str],
) -> tuple[bytes, bytes]:
    if _pair_state(cert_path, key_path):
        cert, _ = _load_pair(cert_path, key_path)
        subject_ok = cert.subject == subject_name(common_name, organizations)
        if subject_ok and signs(ca, cert) and fresh(cert) and (not hosts or covers(cert, hosts)):
            return _read(cert_path), _read(key_path)
    cert_data, key_data = issue_certificate(
        ca, ca_key, common_name, organizations, server_hosts=hosts, client=not hosts
    )
    _write_atomic(key_path, key_data, 0o600)
    _write_atomic(cert_path, cert_data, 0o644)
    return cert_data, key_data


def _ensure_sa_key(key_path: Path, pub_path: Path) -> tuple[bytes, bytes]:
    if key_path.exists():
        key = _load_key(key_path)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise PkiError(f"{key_path}: not an RSA key (ServiceAccount tokens are RS256)")
        key_data = _read(key_path)
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key_data = key_pem(key)
        _write_atomic(key_path, key_data, 0o600)
    pub_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if not pub_path.exists() or _read(pub_path) != pub_pem:
        _write_atomic(pub_path, pub_pem, 0o644)
    return key_data, pub_pem


def ensure_pki(data_dir: Path, hosts: Sequence[str]) -> Pki:
    """The credentials under ``data_dir/pki``, created on first call and reused after.

    ``hosts`` are the addresses and names clients dial besides loopback and ``localhost`` (the
    bind address). The serving and admin certificates are issued again when they no longer
    verify against the CA, come within :data:`RENEW_BEFORE` of their end, or (serving) do not
    cover every host; the CA and the ServiceAccount key are never replaced. Raises
    :class:`PkiError` for an unreadable or corrupt file.
    """
    pki_dir = data_dir / "pki"
    try:
        pki_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise PkiError(f"{pki_dir}: cannot create: {exc.strerror or exc}") from exc
    ca_cert_path, ca_key_path = pki_dir / "ca.crt", pki_dir / "ca.key"
    if _pair_state(ca_cert_path, ca_key_path):
        ca, loaded = _load_pair(ca_cert_path, ca_key_path)
        if not isinstance(loaded, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
            raise PkiError(f"{ca_key_path}: not an RSA or ECDSA key")
        ca_key = loaded
    else:
        ca, ca_key = new_ca()
        _write_atomic(ca_key_path, key_pem(ca_key), 0o600)
        _write_atomic(ca_cert_path, cert_pem(ca), 0o644)
    serving_cert_path, serving_key_path = pki_dir / "apiserver.crt", pki_dir / "apiserver.key"
    _ensure_leaf(
        serving_cert_path,
        serving_key_path,
        ca,
        ca_key,
        SERVING_COMMON_NAME,
        (),
        serving_hosts(hosts),
    )
    admin_cert, admin_key = _ensure_leaf(
        pki_dir / "admin.crt",
        pki_dir / "admin.key",
        ca,
        ca_key,
        ADMIN_USER,
        (ADMIN_GROUP,),
        (),
    )
    sa_key, sa_pub = _ensure_sa_key(pki_dir / "sa.key", pki_dir / "sa.pub")
    return Pki(
        dir=pki_dir,
        ca_cert_pem=_read(ca_cert_path),
        ca_key_pem=_read(ca_key_path),
        serving_cert_path=serving_cert_path,
        serving_key_path=serving_key_path,
        admin_cert_pem=admin_cert,
        admin_key_pem=admin_key,
        sa_key_pem=sa_key,
        sa_public_pem=sa_pub,
    )


def issue_client_certificate(
    pki: Pki, user: str, groups: Sequence[str] = ()
) -> tuple[bytes, bytes]:
    """A client certificate for ``user`` in ``groups`` signed by this server's CA, as PEM
    ``(cert, key)``; nothing is written."""
    ca = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    ca_key = serialization.load_pem_private_key(pki.ca_key_pem, password=None)
    if not isinstance(ca_key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise PkiError(f"{pki.dir / 'ca.key'}: not an RSA or ECDSA key")
    return issue_certificate(ca, ca_key, user, groups)


def server_ssl_context(pki: Pki) -> ssl.SSLContext:
    """The TLS context kube-apiserver serves with: its certificate, and client certificates
    optional but, when sent, verified against the CA (a request without one may still carry a
    bearer token)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(pki.serving_cert_path, pki.serving_key_path)
    ctx.load_verify_locations(cadata=pki.ca_cert_pem.decode())
    ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


def write_kubeconfig(
    path: Path,
    server_url: str,
    pki: Pki,
    cluster_name: str = "kubernetes",
    user: str = ADMIN_USER,
    *,
    token: str | None = None,
) -> None:
    """Write a kubeconfig for ``server_url`` (``https://127.0.0.1:6443``, or with a
    ``/clusters/NAME`` prefix for a logical cluster) to ``path``, mode ``0600`` (it holds a
    private key). The user authenticates with the admin client certificate, or with ``token``
    when one is given."""
    if token is None:
        config = kubeconfig(
            server_url,
            pki.ca_cert_pem,
            cluster_name,
            user,
            client_cert_pem=pki.admin_cert_pem,
            client_key_pem=pki.admin_key_pem,
        )
    else:
        config = kubeconfig(server_url, pki.ca_cert_pem, cluster_name, user, token=token)
    text = yaml.safe_dump(config, sort_keys=False, default_flow_style=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, text.encode(), 0o600)
    except OSError as exc:
        raise PkiError(f"{path}: cannot write: {exc.strerror or exc}") from exc
