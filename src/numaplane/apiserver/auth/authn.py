"""Who sent a request, as kube-apiserver's authenticator chain decides it: a client certificate
signed by the cluster CA (CN is the user, O the groups), then a bearer token from the static
token file (``--token-auth-file``) or a ServiceAccount JWT. Anonymous requests get no user
(the HTTP layer answers 401). Every authenticated user is in ``system:authenticated``.

The token file is read once, by :func:`load_token_file` (kube-apiserver reads it at start too);
everything else is pure.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from numaplane.apiserver.auth.serviceaccount import Lookup, TokenSigner, TokenValidator
from numaplane.apiserver.user import AUTHENTICATED_GROUP, UserInfo
from numaplane.errors import NumaplaneError


class TokenFileError(NumaplaneError):
    """A ``--token-auth-file`` that cannot be used; one line naming the file."""


def _csv_error(path: str, start: int, line: int, column: int, what: str) -> TokenFileError:
    """Go's ``csv.ParseError`` text, naming the file."""
    where = f"parse error on line {line}, column {column}: {what}"
    if start != line:
        where = f"record on line {start}; {where}"
    return TokenFileError(f"{path}: {where}")


def _column(text: str, pos: int) -> int:
    """The 1-based byte column of ``text[pos]`` in its line, as Go counts it."""
    return len(text[text.rfind("\n", 0, pos) + 1 : pos].encode()) + 1


_QUOTE_ERROR: Final = 'extraneous or missing " in quoted-field'


def _csv_records(text: str, path: str) -> list[list[str]]:
    """Records of ``text`` read as Go's ``encoding/csv`` reads them (the format of
    ``--token-auth-file``): fields split on commas, double-quoted fields with ``""`` escapes
    (and line breaks) inside, blank lines skipped, ``\r\n`` read as ``\n``, and Go's parse
    errors with their line and column."""
    text = text.replace("\r\n", "\n")
    records: list[list[str]] = []
    line, pos, n = 1, 0, len(text)
    while pos < n:
        if text[pos] == "\n":
            line += 1
            pos += 1
            continue
        fields: list[str] = []
        start = line
        while True:
            if pos < n and text[pos] == '"':
                pos += 1
                value: list[str] = []
                while True:
                    if pos >= n:
                        # Go reports the last line it read, one past its last byte.
                        if text.endswith("\n"):
                            body = text[:-1]
                            last = body[body.rfind("\n") + 1 :] + "\n"
                            at_line, col = line - 1, len(last.encode()) + 1
                        else:
                            at_line, col = line, _column(text, pos)
                        raise _csv_error(path, start, at_line, col, _QUOTE_ERROR)
                    ch = text[pos]
                    if ch == '"':
                        if pos + 1 < n and text[pos + 1] == '"':
                            value.append('"')
                            pos += 2
                            continue
                        pos += 1
                        break
                    line += ch == "\n"
                    value.append(ch)
                    pos += 1
                if pos < n and text[pos] not in ",\n":
                    # Go points at the closing quote that is followed by neither , nor a break.
                    raise _csv_error(path, start, line, _column(text, pos - 1), _QUOTE_ERROR)
                fields.append("".join(value))
            else:
                end = pos
                while end < n and text[end] not in ",\n":
                    if text[end] == '"':
                        col = _column(text, end)
                        raise _csv_error(path, start, line, col, 'bare " in non-quoted-field')
                    end += 1
                fields.append(text[pos:end])
                pos = end
            if pos < n and text[pos] == ",":
                pos += 1
                continue
            break
        records.append(fields)
    return records


def parse_token_file(text: str, path: str) -> dict[str, UserInfo]:
    """The users of a static token file: one ``token,user,uid[,"group1,group2"]`` record a
    line, as ``tokenfile.NewCSV``; a record of fewer than three columns is upstream's error,
    a record with an empty token is skipped, a repeated token keeps its last record."""
    users: dict[str, UserInfo] = {}
    for record in _csv_records(text, path):
        if len(record) < 3:
            raise TokenFileError(
                f"token file '{path}' must have at least 3 columns (token, user name, user uid), "
                f"found {len(record)}"
            )
        if record[0] == "":
            continue
        groups = tuple(record[3].split(",")) if len(record) >= 4 else ()
        users[record[0]] = UserInfo(name=record[1], groups=groups, uid=record[2])
    return users


def load_token_file(path: Path) -> dict[str, UserInfo]:
    """:func:`parse_token_file` of the file at ``path``; :class:`TokenFileError` when it
    cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise TokenFileError(f"{path}: cannot read the token file: {why}") from exc
    return parse_token_file(text, str(path))


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, as upstream's bearertoken
    authenticator reads it (scheme case-insensitive, one space); ``""`` for an empty token
    (which upstream refuses), None for no bearer header."""
    if not authorization:
        return None
    parts = authorization.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1]


def _with_authenticated(user: UserInfo) -> UserInfo:
    # kube-apiserver's AuthenticatedGroupAdder: added unless already there.
    if AUTHENTICATED_GROUP in user.groups:
        return user
    return UserInfo(user.name, (*user.groups, AUTHENTICATED_GROUP), user.uid, user.extra)


@dataclass(frozen=True)
class Authenticator:
    """The server's authenticator: the CA that client certificates must chain to, the static
    tokens, and the ServiceAccount token validator."""

    ca_cert: x509.Certificate
    tokens: Mapping[str, UserInfo]
    service_accounts: TokenValidator | None = None
    # DER -> (user or None, not before, not after): a client sends the same certificate on
    # every request, and its signature needs checking once.
    _verified: dict[bytes, tuple[UserInfo | None, float, float]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def create(
        cls,
        ca_cert_pem: bytes,
        *,
        tokens: Mapping[str, UserInfo] | None = None,
        signer: TokenSigner | None = None,
    ) -> Authenticator:
        """An authenticator trusting ``ca_cert_pem``, ``tokens`` (from :func:`load_token_file`)
        and the ServiceAccount tokens of ``signer``."""
        validator = None
        if signer is not None:
            validator = TokenValidator(signer.public_key, signer.issuer, signer.api_audiences)
        return cls(x509.load_pem_x509_certificate(ca_cert_pem), dict(tokens or {}), validator)

    def authenticate(
        self,
        peer_cert_der: bytes | None,
        authorization: str | None,
        cluster: str,
        lookup: Lookup,
        now: float | None = None,
    ) -> UserInfo | None:
        """The user of a request (its TLS client certificate in DER, its ``Authorization``
        header) in logical cluster ``cluster``, or None when it carries no valid credential."""
        now = time.time() if now is None else now
        if peer_cert_der is not None:
            user = self.certificate_user(peer_cert_der, now)
            if user is not None:
                return _with_authenticated(user)
        token = bearer_token(authorization)
        if not token:
            return None
        static = self.tokens.get(token)
        if static is not None:
            return _with_authenticated(static)
        if self.service_accounts is not None and token.count(".") == 2:
            user = self.service_accounts.validate(token, cluster, lookup, now)
            if user is not None:
                return _with_authenticated(user)
        return None

    def certificate_user(self, der: bytes, now: float) -> UserInfo | None:
        """The user a client certificate names, when it verifies: signed by the CA, within its
        validity, usable for client authentication (Go's ``x509.Verify`` with ``ClientAuth``)."""
        known = self._verified.get(der)
        if known is None:
            if len(self._verified) >= _CERT_CACHE_SIZE:
                self._verified.clear()
            known = self._verified[der] = _verify_certificate(self.ca_cert, der)
        user, not_before, not_after = known
        return user if not_before <= now <= not_after else None


_CERT_CACHE_SIZE: Final = 1024


def _verify_certificate(
    ca_cert: x509.Certificate, der: bytes
) -> tuple[UserInfo | None, float, float]:
    """The user of a client certificate and its validity window (no user: it does not verify,
    whenever it is presented)."""
    never: tuple[UserInfo | None, float, float] = (None, 0.0, -1.0)
    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError:
        return never
    if cert.issuer != ca_cert.subject:
        return never
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return never
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        usages = None
    if usages is not None and not (
        ExtendedKeyUsageOID.CLIENT_AUTH in usages
        or ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE in usages
    ):
        return never
    common = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    name = str(common[0].value) if common else ""
    if not name:
        # Upstream's CommonNameUserConversion: a certificate without a CN names nobody.
        return never
    groups = tuple(
        str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    )
    window = (cert.not_valid_before_utc.timestamp(), cert.not_valid_after_utc.timestamp())
    return UserInfo(name=name, groups=groups), *window
