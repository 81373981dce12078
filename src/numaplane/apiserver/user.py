"""Who a request is from: upstream's ``user.Info``, shared by authentication, RBAC, the REST
verbs (``managedFields`` managers, ``SelfSubjectReview``) and audit of the HTTP layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: Groups every authenticated user has, as kube-apiserver adds them.
AUTHENTICATED_GROUP = "system:authenticated"
#: The group whose members RBAC's bootstrap policy makes cluster administrators.
MASTERS_GROUP = "system:masters"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated user: ``name`` (``admin``, ``system:serviceaccount:NS:NAME``),
    ``groups`` (``system:authenticated`` included), ``uid`` and ``extra``."""

    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def is_master(self) -> bool:
        """Whether the user is in ``system:masters`` (allowed everything, as upstream)."""
        return MASTERS_GROUP in self.groups
