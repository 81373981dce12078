"""JSON merge patches (RFC 7386) between two versions of an object: how the job reconciler's
writes can be sent without a resourceVersion, as upstream's ``clientutil.Patch`` sends them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch that turns ``old`` into ``new``: changed keys with their new value
    (maps recursively), removed keys as ``None``; lists are replaced whole. Empty when equal."""
    patch: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key)
        if key not in old:
            patch[key] = value
        elif isinstance(value, Mapping) and isinstance(before, Mapping):
            inner = merge_patch(before, value)
            if inner:
                patch[key] = inner
        elif value != before:
            patch[key] = value
    for key in old:
        if key not in new:
            patch[key] = None
    return patch
