"""Server-side apply and field ownership (``metadata.managedFields``), as kube-apiserver's field
manager does them on top of structured-merge-diff.

- :func:`apply` merges an applied configuration into the live object (or an empty one, to create
  it) for a field manager: the manager comes to own exactly the fields it applied; a field another
  manager owns and the apply changes is a conflict (409, ``Apply failed with 1 conflict: conflict
  with "kubectl-client-side-apply" using v1: .spec.replicas``) unless ``force`` takes it over; a
  field the manager applied last time and no longer applies is removed when nobody else owns it.
- :func:`record_update` is the bookkeeping of every other write (create, update, patch): the
  writer becomes owner of the fields it added or changed, which other managers lose.

Entries carry ``manager``, ``operation`` (``Apply``/``Update``), ``apiVersion``, ``time``,
``fieldsType: FieldsV1``, ``fieldsV1`` and, for subresources, ``subresource``; they are sorted
as upstream sorts them, and at most 10 ``Update`` managers are kept (older ones fold into
``ancient-changes``). The schema hint (:class:`~numaplane.apiserver.patchmeta.Schema`) says
which lists are sets or keyed maps; after :func:`apply` the caller defaults the object again, as
the field manager does, since removed fields that have defaults get them back.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from numaplane.apiserver.errors import StatusError, bad_request
from numaplane.apiserver.fieldpath import (
    EMPTY,
    MISSING,
    FieldPathError,
    FieldSet,
    Path,
    compare,
    from_fields_v1,
    merge,
    path_string,
    remove_items,
    same_value,
    to_field_set,
    to_fields_v1,
    with_named_fields,
)
from numaplane.apiserver.patchmeta import UNKNOWN, Schema

MAX_UPDATE_MANAGERS: Final = 10
ANCIENT_CHANGES: Final = "ancient-changes"


def _p(*names: str) -> Path:
    return tuple(("f", n) for n in names)


#: Fields nobody owns (the field manager strips them from every set).
STRIPPED: Final[FieldSet] = frozenset(
    {
        _p("apiVersion"),
        _p("kind"),
        _p("metadata"),
        _p("metadata", "name"),
        _p("metadata", "namespace"),
        _p("metadata", "creationTimestamp"),
        _p("metadata", "selfLink"),
        _p("metadata", "uid"),
        _p("metadata", "clusterName"),
        _p("metadata", "generation"),
        _p("metadata", "managedFields"),
        _p("metadata", "resourceVersion"),
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


def _without_managed(obj: Mapping[str, Any] | None) -> Any:
    if obj is None:
        return MISSING
    out = copy.deepcopy(dict(obj))
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return out


def _drop_empty(managed: Managed, keep: tuple[str, str, str, str] | None = None) -> Managed:
    return {i: e for i, e in managed.items() if e.fields or i == keep}


def _cap_updaters(managed: Managed) -> Managed:
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


def _print_manager(entry: ManagedEntry) -> str:
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
            "message": f"conflict with {_print_manager(e)}",
            "field": path_string(p),
        }
        for e, p in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {_print_manager(entry)}: "
            f"{path_string(path)}"
        )
    else:
        by_manager: dict[str, list[Path]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(_print_manager(entry), []).append(path)
        lines: list[str] = []
        for shown in sorted(by_manager):
            lines.append(f"conflicts with {shown}:")
            lines.extend(f"- {path_string(p)}" for p in by_manager[shown])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": causes})


def _gvknn(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    return (
        f"{meta.get('namespace', '')}/{meta.get('name', '')}; "
        f"{group}/{version}, Kind={obj.get('kind', '')}"
    )


def apply(
    live: Mapping[str, Any] | None,
    applied: Mapping[str, Any],
    manager: str,
    force: bool,
    now: str,
    *,
    schema: Schema = UNKNOWN,
    subresource: str = "",
) -> dict[str, Any]:
    """Server-side apply of ``applied`` by ``manager`` to ``live`` (``None`` creates the object).

    Returns the new object with its ``metadata.managedFields``; raises :class:`StatusError`:
    409 on conflicts (unless ``force``), 400 when the configuration carries managedFields, 500
    (as upstream) for a configuration that does not fit the schema's list keys. ``now`` is the
    RFC 3339 time written into the entry when the object changes."""
    meta = applied.get("metadata")
    if isinstance(meta, Mapping) and meta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    try:
        managed = decode_managed_fields(((live or {}).get("metadata") or {}).get("managedFields"))
    except (ValueError, FieldPathError) as err:
        raise StatusError(500, "", f"failed to decode managed fields: {err}") from None
    before = _without_managed(live)
    base = before if before is not MISSING else {}
    try:
        config_set = to_field_set(applied, schema)
        merged = merge(base, copy.deepcopy(dict(applied)), schema)
    except FieldPathError as err:
        raise StatusError(
            500, "", f"failed to create typed patch object ({_gvknn(applied)}): {err}"
        ) from None
    version = str(applied.get("apiVersion", ""))
    entry = ManagedEntry(manager, "Apply", version, config_set, subresource=subresource)
    ident = entry.ident()
    last = managed.get(ident)
    if last is not None:
        entry = replace(entry, time=last.time)
    managed[ident] = entry
    if last is not None and last.fields:
        merged = _prune(merged, managed, last.fields, schema)
    added, modified, removed = compare(base, merged, schema)
    changed = added | modified
    conflicts: list[tuple[ManagedEntry, Path]] = []
    for other_id, other in managed.items():
        if other_id == ident:
            continue
        conflicts.extend((other, p) for p in sorted(other.fields & changed, key=path_string))
    if conflicts and not force:
        raise conflict_error(conflicts)
    for other_id, other in list(managed.items()):
        if other_id != ident:
            managed[other_id] = replace(other, fields=other.fields - changed - removed)
    managed = _drop_empty(managed, keep=ident)
    managed = {i: replace(e, fields=e.fields - STRIPPED) for i, e in managed.items()}
    object_changed = not same_value(base, merged)
    if object_changed or managed[ident].time is None:
        managed[ident] = replace(managed[ident], time=now)
    result: dict[str, Any] = merged if object_changed else copy.deepcopy(base)
    result.setdefault("metadata", {})["managedFields"] = encode_managed_fields(
        _cap_updaters(managed)
    )
    return result


def _prune(merged: Any, managed: Managed, last: FieldSet, schema: Schema) -> Any:
    # structured-merge-diff's prune: remove what the manager applied last time and no longer
    # does, unless another manager (or the new configuration) owns it; fields nobody owns that
    # the manager never applied stay.
    last_named = with_named_fields(last, schema)
    pruned = remove_items(merged, last_named, schema)
    owned: FieldSet = EMPTY
    for entry in managed.values():
        owned = owned | entry.fields
    owned = with_named_fields(owned | STRIPPED, schema)
    merged_set = with_named_fields(to_field_set(merged, schema), schema)
    pruned_set = with_named_fields(to_field_set(pruned, schema), schema)
    kept = remove_items(merged, merged_set - (pruned_set | owned), schema)
    kept_set = with_named_fields(to_field_set(kept, schema), schema)
    return remove_items(merged, (merged_set - kept_set) & last_named, schema)


def _baseline(new: Mapping[str, Any], schema: Schema) -> dict[str, Any]:
    # What a create compares against: the zero object of the kind, whose struct fields are
    # present but empty (so creating a Pod does not own `spec` itself, as upstream).
    base: dict[str, Any] = {"metadata": {}}
    for name in ("spec", "status"):
        if name in schema.fields and name in new:
            base[name] = {}
    return base


def record_update(
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    manager: str,
    now: str,
    *,
    operation: str = "Update",
    subresource: str = "",
    schema: Schema = UNKNOWN,
) -> list[dict[str, Any]]:
    """The ``managedFields`` of ``new`` after a create (``old`` is ``None``), update or patch
    by ``manager``: it owns what it added or changed, which other managers lose, and what was
    removed is nobody's any more. Managed fields sent in ``new`` replace the live ones (an empty
    list resets them), as upstream; on a subresource they are ignored."""
    live_entries = ((old or {}).get("metadata") or {}).get("managedFields")
    new_entries = (new.get("metadata") or {}).get("managedFields")
    try:
        if subresource:
            managed = decode_managed_fields(live_entries)
        elif isinstance(new_entries, list) and (
            not new_entries or (len(new_entries) == 1 and not new_entries[0])
        ):
            managed = {}
        else:
            managed = decode_managed_fields(new_entries)
            if not managed:
                managed = decode_managed_fields(live_entries)
    except (ValueError, FieldPathError):
        # Upstream leaves the object's managed fields alone when it cannot read them.
        return list(new_entries) if isinstance(new_entries, list) else []
    before = _without_managed(old)
    after = _without_managed(new)
    if before is MISSING:
        before = _baseline(after, schema)
    try:
        added, modified, removed = compare(before, after, schema)
    except FieldPathError:
        return encode_managed_fields(managed)
    taken = (added | modified) - removed
    for ident, entry in list(managed.items()):
        managed[ident] = replace(entry, fields=entry.fields - taken - removed)
    taken = taken - STRIPPED
    version = str(new.get("apiVersion", ""))
    entry = ManagedEntry(manager, operation, version, taken, now, subresource)
    previous = managed.get(entry.ident())
    managed = _drop_empty(managed)
    if taken:
        fields = taken | previous.fields if previous is not None else taken
        managed[entry.ident()] = replace(entry, fields=fields)
    elif previous is not None and previous.fields:
        managed[entry.ident()] = previous
    managed = {i: replace(e, fields=e.fields - STRIPPED) for i, e in managed.items()}
    return encode_managed_fields(_cap_updaters(_drop_empty(managed)))
