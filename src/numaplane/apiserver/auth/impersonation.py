"""User impersonation (``kubectl --as``, ``--as-group``, ``--as-uid``), as kube-apiserver's
``WithImpersonation`` filter does it between authentication and authorization: each requested
user, group, extra value and uid must be allowed to the requester by the ``impersonate`` verb
(on ``users``, ``groups``, ``serviceaccounts``, ``userextras/KEY`` or ``uids``), and the
request then proceeds as the impersonated user.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from numaplane.apiserver import errors
from numaplane.apiserver.auth.rbac import Attributes, RBACAuthorizer
from numaplane.apiserver.auth.serviceaccount import (
    SA_GROUP,
    SA_PREFIX,
    service_account_username,
)
from numaplane.apiserver.user import AUTHENTICATED_GROUP, UserInfo

USER_HEADER: Final = "impersonate-user"
GROUP_HEADER: Final = "impersonate-group"
UID_HEADER: Final = "impersonate-uid"
EXTRA_PREFIX: Final = "impersonate-extra-"
ANONYMOUS: Final = "system:anonymous"
UNAUTHENTICATED_GROUP: Final = "system:unauthenticated"
AUTHENTICATION_GROUP: Final = "authentication.k8s.io"
_DNS_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)


@dataclass(frozen=True)
class _Request:
    """One thing asked for, as upstream's ``ObjectReference``: kind, namespace, name and (for
    extra values) the key in ``field_path``."""

    kind: str
    name: str
    namespace: str = ""
    field_path: str = ""

    def go_value(self) -> str:
        # Go's %v of an ObjectReference: its seven fields, space-separated, in braces.
        fields = (self.kind, self.namespace, self.name, "", "", "", self.field_path)
        return "{" + " ".join(fields) + "}"


def impersonation_requested(headers: Iterable[tuple[str, str]]) -> bool:
    """Whether a request carries any ``Impersonate-*`` header."""
    return any(name.lower().startswith("impersonate-") for name, _ in headers)


def _requests(headers: Iterable[tuple[str, str]]) -> list[_Request]:
    pairs = [(name.lower(), value) for name, value in headers]
    out: list[_Request] = []
    user = next((v for n, v in pairs if n == USER_HEADER), "")
    if user:
        parts = user.removeprefix(SA_PREFIX).split(":")
        # Upstream's SplitUsername: the prefix, a namespace (a DNS label) and a name (a DNS
        # subdomain); anything else is an ordinary user name.
        if (
            user.startswith(SA_PREFIX)
            and len(parts) == 2
            and _DNS_LABEL.fullmatch(parts[0])
            and len(parts[1]) <= 253
            and _DNS_SUBDOMAIN.fullmatch(parts[1])
        ):
            out.append(_Request("ServiceAccount", parts[1], parts[0]))
        else:
            out.append(_Request("User", user))
    groups = [_Request("Group", v) for n, v in pairs if n == GROUP_HEADER]
    extras = [
        _Request("UserExtra", v, field_path=unquote(n.removeprefix(EXTRA_PREFIX)))
        for n, v in pairs
        if n.startswith(EXTRA_PREFIX)
    ]
    uid = next((v for n, v in pairs if n == UID_HEADER), "")
    out += groups + extras
    if uid:
        out.append(_Request("UID", uid))
    if (groups or extras or uid) and not user:
        listed = " ".join(r.go_value() for r in out)
        raise errors.internal_error(f"requested [{listed}] without impersonating a user")
    return out


def impersonate(
    requester: UserInfo, headers: Iterable[tuple[str, str]], authorizer: RBACAuthorizer
) -> UserInfo:
    """The user a request acts as: ``requester`` itself when it asks no impersonation,
    otherwise the impersonated user once every part of it is authorized; raises the 403 of the
    first part refused (worded as the authorization filter's), or a 500 for groups, extra or
    uid asked without a user, as upstream."""
    headers = list(headers)
    requests = _requests(headers)
    if not requests:
        return requester
    groups_given = any(r.kind == "Group" for r in requests)
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for request in requests:
        group = ""
        subresource = ""
        if request.kind == "ServiceAccount":
            resource = "serviceaccounts"
            name = service_account_username(request.namespace, request.name)
            if not groups_given:
                # A ServiceAccount's groups are a fixed mapping from its namespace.
                groups = [SA_GROUP, f"{SA_GROUP}:{request.namespace}"]
        elif request.kind == "User":
            resource = "users"
            name = request.name
        elif request.kind == "Group":
            resource = "groups"
            groups.append(request.name)
        elif request.kind == "UserExtra":
            resource, group, subresource = "userextras", AUTHENTICATION_GROUP, request.field_path
            extra.setdefault(request.field_path, []).append(request.name)
        else:
            resource, group = "uids", AUTHENTICATION_GROUP
            uid = request.name
        attrs = Attributes(
            requester,
            "impersonate",
            request.namespace,
            group,
            resource=resource,
            subresource=subresource,
            name=request.name,
        )
        decision = authorizer.authorize(attrs)
        if not decision.allowed:
            raise errors.forbidden(
                requester.name,
                "impersonate",
                resource,
                group,
                request.namespace,
                request.name,
                subresource,
                reason=decision.reason,
            )
    if name != ANONYMOUS:
        if not any(g in (AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP) for g in groups):
            groups.append(AUTHENTICATED_GROUP)
    elif UNAUTHENTICATED_GROUP not in groups:
        groups.append(UNAUTHENTICATED_GROUP)
    return UserInfo(name, tuple(groups), uid, {k: tuple(v) for k, v in extra.items()})
