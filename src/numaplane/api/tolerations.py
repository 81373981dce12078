"""Toleration matching as upstream's ``Toleration.ToleratesTaint`` (``k8s.io/api/core/v1``),
shared by the pod scheduler's TaintToleration filter and Kueue's flavor assignment.

An empty effect matches every effect; an empty key with ``Exists`` matches every taint;
``Exists`` ignores the value; ``Equal`` (the default operator) needs the same value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["tolerates"]


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``toleration`` tolerates ``taint`` (see the module doc)."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        # An empty key must go with Exists (validation refuses it); it tolerates nothing here.
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False
