"""NodeAffinity: ``spec.nodeSelector`` and the required node affinity must both match.

As upstream's ``nodeaffinity`` plugin and ``component-helpers`` node selector: the node
selector's every label must be equal; of the required ``nodeSelectorTerms`` one must match (the
terms are ORed, an empty term list or a term without requirements matches nothing); a term's
``matchExpressions`` (node labels) and ``matchFields`` (only ``metadata.name``) are ANDed.
Operators: ``In``, ``NotIn`` (a missing label matches), ``Exists``, ``DoesNotExist``, ``Gt``
and ``Lt`` (the label and the single value read as integers; otherwise no match).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.podinfo import PodInfo

__all__ = ["REASON", "filter_node", "matches_requirement", "matches_terms"]

REASON: Final = "node(s) didn't match Pod's node affinity/selector"
"""Upstream's ``ErrReasonPod``."""


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def matches_requirement(req: Mapping[str, Any], values_of: Mapping[str, str]) -> bool:
    """One ``NodeSelectorRequirement`` against a node's labels (or fields)."""
    key = str(req.get("key", ""))
    operator = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    present = key in values_of
    value = values_of.get(key, "")
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, bound = _int(value), _int(values[0])
        if have is None or bound is None:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def matches_terms(terms: list[dict[str, Any]], node: NodeInfo) -> bool:
    """Whether one of the ``nodeSelectorTerms`` matches the node."""
    fields = {"metadata.name": node.name}
    for term in terms:
        expressions = term.get("matchExpressions") or []
        field_reqs = term.get("matchFields") or []
        if not expressions and not field_reqs:
            continue
        if all(matches_requirement(r, node.labels) for r in expressions) and all(
            matches_requirement(r, fields) for r in field_reqs
        ):
            return True
    return False


def filter_node(pod: PodInfo, node: NodeInfo) -> tuple[str, ...]:
    """``(REASON,)`` when the node selector or the required affinity does not match."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return (REASON,)
    if pod.required_terms is not None and not matches_terms(pod.required_terms, node):
        return (REASON,)
    return ()
