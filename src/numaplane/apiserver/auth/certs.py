"""X.509 certificates of the server's PKI, built with ``cryptography`` the way kubeadm builds
its own: a self-signed CA, leaf certificates signed by it (CN the user and O its groups for
clients, SANs for the serving certificate), and the checks that decide whether a stored
certificate can be reused. Pure: :mod:`numaplane.apiserver.auth.pki` does the files."""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable, Sequence
from typing import Final

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificateIssuerPrivateKeyTypes,
    PrivateKeyTypes,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_VALIDITY: Final = datetime.timedelta(days=3650)
LEAF_VALIDITY: Final = datetime.timedelta(days=365)
#: A leaf certificate this close to its end is issued again on start (the embedded server has no
#: ``kubeadm certs renew``); the CA is never replaced.
RENEW_BEFORE: Final = datetime.timedelta(days=30)
#: Issued certificates start this much in the past, so a client whose clock is a little behind
#: still accepts them (kubeadm back-dates by the same margin).
BACKDATE: Final = datetime.timedelta(minutes=5)

#: The admin identity of kubeadm's ``admin.conf`` (before 1.29 split off ``super-admin.conf``).
ADMIN_USER: Final = "kubernetes-admin"
ADMIN_GROUP: Final = "system:masters"
CA_COMMON_NAME: Final = "kubernetes"
SERVING_COMMON_NAME: Final = "kube-apiserver"
#: The in-cluster names kube-apiserver's serving certificate carries besides the bind address.
SERVICE_DNS_NAMES: Final = (
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
ALWAYS_HOSTS: Final = ("127.0.0.1", "::1", "localhost")


def utc_now() -> datetime.datetime:
    """The current time, timezone-aware UTC."""
    return datetime.datetime.now(datetime.UTC)


def key_pem(key: PrivateKeyTypes) -> bytes:
    """``key`` as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def cert_pem(cert: x509.Certificate) -> bytes:
    """``cert`` as PEM."""
    return cert.public_bytes(serialization.Encoding.PEM)


def new_leaf_key() -> ec.EllipticCurvePrivateKey:
    """A new key for a certificate."""
    # P-256: what Go's TLS stack and kubectl handle natively, and generated in microseconds
    # where RSA takes tens of milliseconds on a loaded machine.
    return ec.generate_private_key(ec.SECP256R1())


def public_der(key: PrivateKeyTypes) -> bytes:
    """The DER SubjectPublicKeyInfo of ``key``'s public half."""
    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def signs(ca: x509.Certificate, cert: x509.Certificate) -> bool:
    """Whether ``cert`` was issued by ``ca`` (its signature verifies with the CA key)."""
    if cert.issuer != ca.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def subject_name(common_name: str, organizations: Sequence[str] = ()) -> x509.Name:
    """``O=...`` for each organization, then ``CN=common_name``, as kubeadm names subjects."""
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attrs)


def _base_builder(
    subject: x509.Name,
    issuer: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    now: datetime.datetime,
    validity: datetime.timedelta,
    *,
    ca: bool,
) -> x509.CertificateBuilder:
    # What CA and leaf certificates share: names, key, a random serial, a validity backdated
    # for clock skew, basic constraints and key usage (certificate signing for the CA only).
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )


def new_ca() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A new self-signed CA (``CN=kubernetes``, ten years) and its key."""
    key = new_leaf_key()
    now = utc_now()
    subject = subject_name(CA_COMMON_NAME)
    cert = (
        _base_builder(subject, subject, key, now, CA_VALIDITY, ca=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def issue_certificate(
    ca_cert: x509.Certificate,
    ca_key: CertificateIssuerPrivateKeyTypes,
    common_name: str,
    organizations: Sequence[str] = (),
    *,
    server_hosts: Sequence[str] = (),
    client: bool = True,
    validity: datetime.timedelta = LEAF_VALIDITY,
) -> tuple[bytes, bytes]:
    """A new leaf certificate and key signed by the CA, as PEM ``(cert, key)``.

    A client certificate (``client=True``) names the user in CN and the groups in O, which is how
    kube-apiserver's x509 authenticator reads it; ``server_hosts`` (IP addresses or DNS names)
    make it a serving certificate instead.
    """
    key = new_leaf_key()
    now = utc_now()
    subject = subject_name(common_name, organizations)
    builder = (
        _base_builder(subject, ca_cert.subject, key, now, validity, ca=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [ExtendedKeyUsageOID.SERVER_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_cert.public_key()  # type: ignore[arg-type]
            ),
            critical=False,
        )
    )
    if server_hosts:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(_general_names(server_hosts)), critical=False
        )
    cert = builder.sign(ca_key, hashes.SHA256())
    return cert_pem(cert), key_pem(key)


def _general_names(hosts: Iterable[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in dedup(hosts):
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def dedup(items: Iterable[str]) -> list[str]:
    """``items`` without repeats, in first-seen order."""
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def serving_hosts(hosts: Sequence[str]) -> list[str]:
    """The names the serving certificate covers: loopback, ``localhost``, the in-cluster service
    names, and ``hosts`` (the bind address and any other), without the unspecified addresses
    (``0.0.0.0``, ``::``) no client ever dials."""
    wanted = [*ALWAYS_HOSTS, *hosts, *SERVICE_DNS_NAMES]
    out = []
    for host in wanted:
        try:
            if ipaddress.ip_address(host).is_unspecified:
                continue
        except ValueError:
            pass
        out.append(host)
    return dedup(out)


def covers(cert: x509.Certificate, hosts: Sequence[str]) -> bool:
    """Whether every host is among ``cert``'s subject alternative names."""
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    have |= set(san.get_values_for_type(x509.DNSName))
    return all(str(_normal_host(h)) in have for h in hosts)


def _normal_host(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def fresh(cert: x509.Certificate) -> bool:
    """Whether ``cert`` has more than :data:`RENEW_BEFORE` left."""
    return cert.not_valid_after_utc - utc_now() > RENEW_BEFORE
