"""Defaulting from a structural schema, as upstream's ``structuraldefaulting.Default``: a
property with a ``default`` that is absent (or ``null`` where the schema is not nullable) gets a
copy of the default, then defaulting goes on inside, so defaults nested in defaults apply too.
The same holds for list items and additionalProperties values that are a non-nullable ``null``.
"""

from __future__ import annotations

import copy
from typing import Any

from numaplane.apiserver.crd.schema import Node


def _non_nullable_null(value: Any, node: Node) -> bool:
    return value is None and not node.nullable


def apply_defaults(node: Node, obj: Any) -> None:
    """Fill ``obj`` (in place) with the defaults of ``node``."""
    if isinstance(obj, dict):
        for key, prop in node.properties.items():
            if prop.has_default and (key not in obj or _non_nullable_null(obj[key], prop)):
                obj[key] = copy.deepcopy(prop.default)
        for key, value in obj.items():
            known = node.properties.get(key)
            if known is not None:
                apply_defaults(known, value)
            elif node.additional is not None:
                extra = node.additional
                if extra.has_default and _non_nullable_null(value, extra):
                    obj[key] = value = copy.deepcopy(extra.default)
                apply_defaults(extra, value)
    elif isinstance(obj, list) and node.items is not None:
        items = node.items
        for i, value in enumerate(obj):
            if items.has_default and _non_nullable_null(value, items):
                obj[i] = value = copy.deepcopy(items.default)
            apply_defaults(items, value)
