"""What the server knows about one served resource: names, scope, verbs, subresources, and the
strategy that defaults, prepares and validates its objects (upstream's ``rest.RESTCreateStrategy``
and friends), plus its field selectors and table columns.

Built-in kinds (``numaplane.apiserver.kinds``) and CustomResourceDefinitions
(``numaplane.apiserver.crd``) both describe themselves as :class:`ResourceInfo`; the HTTP layer,
discovery, OpenAPI and tables read only this.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from numaplane.apiserver.errors import FieldError

Object = dict[str, Any]

ALL_VERBS: tuple[str, ...] = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


class Strategy(Protocol):
    """How one resource (or one of its subresources) treats writes, as upstream's strategies.

    Every method works on plain JSON objects in place or returns field errors; none does I/O.
    """

    def default(self, obj: Object) -> None:
        """Fill defaulted fields (the scheme's defaulting, applied on every decode)."""

    def prepare_for_create(self, obj: Object) -> None:
        """Reset what a create may not set (``status`` for kinds with a status subresource)."""

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Carry over what this endpoint may not change (``status`` on the main resource,
        everything but ``status`` on the status subresource)."""

    def validate(self, obj: Object) -> list[FieldError]:
        """Field errors of a new object (metadata included)."""

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        """Field errors of an update (immutability included)."""

    def bumps_generation(self, new: Object, old: Object) -> bool:
        """Whether ``metadata.generation`` goes up: a spec change, for most kinds."""


#: ObjectMeta's documentation of ``name`` and ``creationTimestamp``: upstream's tables use them as
#: the Name and Age / Created At column descriptions.
NAME_DESCRIPTION: Final = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATION_DESCRIPTION: Final = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


@dataclass(frozen=True)
class TableColumn:
    """One column of a ``meta.k8s.io/v1`` Table (``columnDefinitions`` entry)."""

    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0


class TablePrinter(Protocol):
    """The columns ``kubectl get`` shows for a resource, and one row's cells for an object."""

    def columns(self) -> tuple[TableColumn, ...]:
        """The column definitions, in order (``Name`` first)."""

    def row(self, obj: Object, now: float) -> list[Any]:
        """The cells of ``obj``'s row; ``now`` (epoch seconds) is for ages."""


FieldSetFunc = Callable[[Object], Mapping[str, str]]


@dataclass(frozen=True)
class ResourceInfo:
    """A served resource: ``group``/``version``/``resource`` (plural) and its ``kind``.

    ``subresources`` names what is served below an object (``status``, ``scale``, ``binding``,
    ``log``, ``token``, ...). ``strategy`` governs the main resource and ``status_strategy`` the
    ``status`` subresource. ``field_set`` maps an object to the values field selectors may test
    (``metadata.name`` and ``metadata.namespace`` always among them). ``storage_version`` is the
    version objects are kept at (a CRD may serve several).
    """

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    strategy: Strategy
    table: TablePrinter
    field_set: FieldSetFunc
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    status_strategy: Strategy | None = None
    storage_version: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def group_version(self) -> str:
        """``batch/v1``, or ``v1`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``jobs.batch``, or ``pods`` for the core group (the name errors use)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def list_kind(self) -> str:
        """``JobList``."""
        return f"{self.kind}List"

    @property
    def singular_name(self) -> str:
        """The singular name (lower-cased kind unless set)."""
        return self.singular or self.kind.lower()
