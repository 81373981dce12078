"""``metadata.managedFields`` entries as kube-apiserver's field manager reads and writes them:
decoded by manager identity, encoded in upstream's order, capped at 10 ``Update`` managers, and
the 409 of an apply that conflicts with them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.fieldpath import FieldSet, Path, from_fields_v1, path_string, to_fields_v1

MAX_UPDATE_MANAGERS: Final = 10
ANCIENT_CHANGES: Final = "ancient-changes"


def field_path(*names: str) -> Path:
    """The path of nested fields ``names`` (``("metadata", "name")``)."""
    return tuple(("f", n) for n in names)


#: Fields nobody owns (the field manager strips them from every set).
STRIPPED: Final[FieldSet] = frozenset(
    {
        field_path("apiVersion"),
        field_path("kind"),
        field_path("metadata"),
        field_path("metadata", "name"),
        field_path("metadata", "namespace"),
        field_path("metadata", "creationTimestamp"),
        field_path("metadata", "selfLink"),
        field_path("metadata", "uid"),
        field_path("metadata", "clusterName"),
        field_path("metadata", "generation"),
        field_path("metadata", "managedFields"),
        field_path("metadata", "resourceVersion"),
    }
)


@dataclass(frozen=True)
class ManagedEntry:
    """One ``managedFields`` entry, decoded."""

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    time: str | None = None
    subresource: str = ""

    def ident(self) -> tuple[str, str, str, str]:
        """Who this entry is: appliers are one manager across API versions, updaters not."""
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def encode(self) -> dict[str, Any]:
        """The ``ManagedFieldsEntry`` JSON, keys in upstream's order."""
        out: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
        }
        if self.time is not None:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


Managed = dict[tuple[str, str, str, str], ManagedEntry]


def decode_managed_fields(entries: Any) -> Managed:
    """The entries of ``metadata.managedFields`` by manager identity; raises ``ValueError``
    for entries the field manager could not read."""
    managed: Managed = {}
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    for raw in entries:
        if not isinstance(raw, Mapping):
            raise ValueError("managedFields entry must be an object")
        operation = raw.get("operation", "")
        if operation not in ("Apply", "Update"):
            raise ValueError(f"unknown operation {operation!r}")
        if raw.get("fieldsType", "FieldsV1") != "FieldsV1":
            raise ValueError(f"invalid fieldsType {raw.get('fieldsType')!r}")
        fields = from_fields_v1(raw.get("fieldsV1") or {})
        entry = ManagedEntry(
            manager=str(raw.get("manager", "")),
            operation=operation,
            api_version=str(raw.get("apiVersion", "")),
            fields=fields,
            time=raw.get("time"),
            subresource=str(raw.get("subresource", "")),
        )
        if entry.ident() in managed:
            raise ValueError(f"duplicate entries for manager {entry.manager!r}")
        managed[entry.ident()] = entry
    return managed


def encode_managed_fields(managed: Managed) -> list[dict[str, Any]]:
    """The ``managedFields`` list, sorted as upstream: operation, time, manager, apiVersion,
    subresource."""
    entries = sorted(
        managed.values(),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    return [e.encode() for e in entries]


def drop_empty(managed: Managed, keep: tuple[str, str, str, str] | None = None) -> Managed:
    """``managed`` without the entries that own nothing (except ``keep``, an applier)."""
    return {i: e for i, e in managed.items() if e.fields or i == keep}


def cap_updaters(managed: Managed) -> Managed:
    """At most :data:`MAX_UPDATE_MANAGERS` ``Update`` entries: the oldest fold into an
    ``ancient-changes`` entry per API version, as upstream's capManagersManager."""
    updaters = [i for i, e in managed.items() if e.operation == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managed
    updaters.sort(key=lambda i: (managed[i].time or "", i))
    out = dict(managed)
    count = len(updaters)
    for ident in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        entry = out.pop(ident)
        bucket_id = (ANCIENT_CHANGES, "Update", entry.api_version, "")
        bucket = out.get(bucket_id)
        if bucket is None:
            out[bucket_id] = replace(entry, manager=ANCIENT_CHANGES, subresource="")
        else:
            times = [t for t in (bucket.time, entry.time) if t]
            out[bucket_id] = replace(
                bucket, fields=bucket.fields | entry.fields, time=max(times) if times else None
            )
            count -= 1
    return out


def print_manager(entry: ManagedEntry) -> str:
    """A manager as conflicts name it: ``"m"``, ``"m" with subresource "status"``, and for an
    updater `` using v1``."""
    shown = f'"{entry.manager}"'
    if entry.subresource:
        shown += f' with subresource "{entry.subresource}"'
    if entry.operation == "Update":
        shown += f" using {entry.api_version}"
    return shown


def conflict_error(conflicts: list[tuple[ManagedEntry, Path]]) -> StatusError:
    """The 409 of an apply that conflicts, worded and detailed as kube-apiserver's."""
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {print_manager(e)}",
            "field": path_string(p),
        }
        for e, p in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {print_manager(entry)}: "
            f"{path_string(path)}"
        )
    else:
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(print_manager(entry), []).append(path)
        lines: list[str] = []
        for shown in sorted(by_manager):
            lines.append(f"conflicts with {shown}:")
            lines.extend(f"- {path_string(p)}" for p in by_manager[shown])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": causes})
