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
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from numaplane.apiserver.errors import StatusError, bad_request
from numaplane.apiserver.fieldmerge import merge, remove_items
from numaplane.apiserver.fieldpath import (
    EMPTY,
    MISSING,
    FieldPathError,
    FieldSet,
    Path,
    compare,
    path_string,
    same_value,
    to_field_set,
    with_named_fields,
)
from numaplane.apiserver.managedfields import (
    STRIPPED,
    Managed,
    ManagedEntry,
    cap_updaters,
    conflict_error,
    decode_managed_fields,
    drop_empty,
    encode_managed_fields,
    field_path,
)
from numaplane.apiserver.patchmeta import Schema, builtin_schema
from numaplane.errors import NumaplaneError

BEFORE_FIRST_APPLY: Final = "before-first-apply"
KUBECTL: Final = "kubectl"
LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"


def schema_of(obj: Mapping[str, Any]) -> Schema:
    """The schema hint of a built-in kind from ``obj``'s ``apiVersion``/``kind`` (object
    metadata only for other kinds): what :func:`apply` and :func:`record_update` use when the
    caller passes none. Custom resources should pass their CRD's
    (:func:`~numaplane.apiserver.patchmeta.custom_resource_schema`)."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return builtin_schema(group, str(obj.get("kind", "")))


def _reset_filter(reset_fields: Sequence[Sequence[str]]) -> Callable[[FieldSet], FieldSet]:
    # The strategy's reset fields (`status` of the main resource, `spec` of `status`): nobody
    # comes to own them by writing there, as upstream's ignore filter has it.
    prefixes = [field_path(*names) for names in reset_fields]

    def keep(fields: FieldSet) -> FieldSet:
        if not prefixes:
            return fields
        return frozenset(p for p in fields if not any(p[: len(x)] == x for x in prefixes))

    return keep


def _without_managed(obj: Mapping[str, Any] | None) -> Any:
    # A shallow view: the walks never modify their inputs, and what apply returns is copied.
    if obj is None:
        return MISSING
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, Mapping) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _gvknn(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    return (
        f"{meta.get('namespace', '')}/{meta.get('name', '')}; "
        f"{group}/{version}, Kind={obj.get('kind', '')}"
    )


class _ConflictsError(NumaplaneError):
    def __init__(self, conflicts: list[tuple[ManagedEntry, Path]]) -> None:
        super().__init__("conflicts")
        self.conflicts = conflicts


def apply(
    live: Mapping[str, Any] | None,
    applied: Mapping[str, Any],
    manager: str,
    force: bool,
    now: str,
    *,
    schema: Schema | None = None,
    subresource: str = "",
    reset_fields: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """Server-side apply of ``applied`` by ``manager`` to ``live`` (``None`` creates the object).

    Returns the new object with its ``metadata.managedFields``; raises :class:`StatusError`:
    409 on conflicts (unless ``force``), 400 when the configuration carries managedFields, 500
    (as upstream) for a configuration that does not fit the schema's list keys. ``now`` is the
    RFC 3339 time written into the entry when the object changes. ``reset_fields`` are the
    field paths the strategy resets on this endpoint (``[("status",)]`` for the main resource of
    a kind with a status subresource): applying them owns nothing and conflicts with nobody.

    As kube-apiserver's field manager: a live object nobody manages yet is first recorded as
    written by ``before-first-apply``; for the manager ``kubectl`` (``kubectl apply
    --server-side``), conflicts on fields of the object's client-side-apply annotation
    (``kubectl.kubernetes.io/last-applied-configuration``) are taken over, and that annotation
    is kept in step with the applied configuration."""
    meta = applied.get("metadata")
    if isinstance(meta, Mapping) and meta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    if schema is None:
        schema = schema_of(applied)
    try:
        managed = decode_managed_fields(((live or {}).get("metadata") or {}).get("managedFields"))
    except (ValueError, FieldPathError) as err:
        raise StatusError(500, "", f"failed to decode managed fields: {err}") from None
    if live is not None and not managed:
        entries = record_update(None, live, BEFORE_FIRST_APPLY, now, schema=schema)
        managed = decode_managed_fields(entries)
    keep = _reset_filter(reset_fields)
    try:
        config_set = keep(to_field_set(applied, schema, allow_duplicates=False))
        merged = merge(
            _without_managed(live) if live is not None else {},
            copy.deepcopy(dict(applied)),
            schema,
        )
    except FieldPathError as err:
        raise StatusError(
            500, "", f"failed to create typed patch object ({_gvknn(applied)}): {err}"
        ) from None
    args = (live, applied, merged, config_set, manager, managed, now, schema, subresource, keep)
    try:
        result = _apply_core(*args, force=force)
    except _ConflictsError as found:
        allowed = _last_applied_fields(live, schema) if manager == KUBECTL else None
        remaining = [(e, p) for e, p in found.conflicts if allowed is None or p not in allowed]
        if remaining:
            raise conflict_error(remaining) from None
        result = _apply_core(*args, force=True)
    annotations = (result.get("metadata") or {}).get("annotations")
    if manager == KUBECTL and isinstance(annotations, dict) and LAST_APPLIED in annotations:
        annotations[LAST_APPLIED] = build_last_applied(applied)
    return result


def _apply_core(
    live: Mapping[str, Any] | None,
    applied: Mapping[str, Any],
    merged: Any,
    config_set: FieldSet,
    manager: str,
    managed: Managed,
    now: str,
    schema: Schema,
    subresource: str,
    keep: Callable[[FieldSet], FieldSet],
    *,
    force: bool,
) -> dict[str, Any]:
    managed = dict(managed)
    base = _without_managed(live) if live is not None else {}
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
    changed = keep(added | modified)
    removed = keep(removed)
    conflicts: list[tuple[ManagedEntry, Path]] = []
    for other_id, other in managed.items():
        if other_id == ident:
            continue
        conflicts.extend((other, p) for p in sorted(other.fields & changed, key=path_string))
    if conflicts and not force:
        raise _ConflictsError(conflicts)
    for other_id, other in list(managed.items()):
        if other_id != ident:
            managed[other_id] = replace(other, fields=other.fields - changed - removed)
    managed = drop_empty(managed, keep=ident)
    managed = {i: replace(e, fields=e.fields - STRIPPED) for i, e in managed.items()}
    object_changed = not same_value(base, merged)
    if object_changed or managed[ident].time is None:
        managed[ident] = replace(managed[ident], time=now)
    result: dict[str, Any] = copy.deepcopy(merged) if object_changed else copy.deepcopy(base)
    result.setdefault("metadata", {})["managedFields"] = encode_managed_fields(
        cap_updaters(managed)
    )
    return result


def _last_applied_fields(live: Mapping[str, Any] | None, schema: Schema) -> FieldSet | None:
    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED)
    if not isinstance(text, str):
        return None
    try:
        return to_field_set(json.loads(text), schema)
    except (ValueError, FieldPathError):
        return None


def build_last_applied(applied: Mapping[str, Any]) -> str:
    """The client-side-apply annotation for ``applied``: its JSON (keys sorted, HTML-safe as
    Go's encoder writes it, a final newline) without the annotation itself."""
    obj = copy.deepcopy(dict(applied))
    meta = obj.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        meta["annotations"].pop(LAST_APPLIED, None)
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n"


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
    for name in schema.zero_fields:
        if name in new:
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
    schema: Schema | None = None,
    reset_fields: Sequence[Sequence[str]] = (),
) -> list[dict[str, Any]]:
    """The ``managedFields`` of ``new`` after a create (``old`` is ``None``), update or patch
    by ``manager``: it owns what it added or changed, which other managers lose, and what was
    removed is nobody's any more. Managed fields sent in ``new`` replace the live ones (an empty
    list resets them), as upstream; on a subresource they are ignored. ``reset_fields`` as for
    :func:`apply`."""
    keep = _reset_filter(reset_fields)
    if schema is None:
        schema = schema_of(new)
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
    taken = keep((added | modified) - removed)
    removed = keep(removed)
    for ident, entry in list(managed.items()):
        managed[ident] = replace(entry, fields=entry.fields - taken - removed)
    taken = taken - STRIPPED
    version = str(new.get("apiVersion", ""))
    entry = ManagedEntry(manager, operation, version, taken, now, subresource)
    previous = managed.get(entry.ident())
    managed = drop_empty(managed)
    if taken:
        fields = taken | previous.fields if previous is not None else taken
        managed[entry.ident()] = replace(entry, fields=fields)
    elif previous is not None and previous.fields:
        managed[entry.ident()] = previous
    managed = {i: replace(e, fields=e.fields - STRIPPED) for i, e in managed.items()}
    return encode_managed_fields(cap_updaters(drop_empty(managed)))
