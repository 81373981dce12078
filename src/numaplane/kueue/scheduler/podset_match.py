"""Whether a ResourceFlavor can host a podSet's pods, as upstream's flavor assigner checks it
(``checkFlavorForPodSets`` and ``flavorSelector`` in ``pkg/scheduler/flavorassigner``):

* every ``NoSchedule``/``NoExecute`` taint of the flavor must be tolerated by the pods'
  tolerations or the flavor's own (component-helpers' ``FindMatchingUntoleratedTaint``);
* the pods' ``nodeSelector`` and required node affinity, reduced to the label keys **this
  flavor** sets, must match the flavor's ``nodeLabels`` as if they were a node's labels
  (component-helpers' ``nodeaffinity.GetRequiredNodeAffinity``). A term left without
  expressions matches any flavor, since the terms are ORed; ``matchFields`` never take part.

A selector that does not parse is a :class:`PodSetMatchError` (upstream returns it as the
podSet's error status).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.api.selectors import Operator, Requirement, SelectorError, new_requirement
from numaplane.api.tolerations import tolerates
from numaplane.gofmt import go_quote
from numaplane.kueue.api.model import PodSet, ResourceFlavor
from numaplane.kueue.errors import KueueError

__all__ = [
    "PodSetMatchError",
    "flavor_mismatch",
    "matches_node_affinity",
    "taint_string",
    "untolerated_taint",
]

_FILTERED_EFFECTS: Final = ("NoSchedule", "NoExecute")

_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}


class PodSetMatchError(KueueError):
    """A podSet's required node affinity that does not parse; ``str()`` is upstream's text."""


def untolerated_taint(
    taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The first ``NoSchedule``/``NoExecute`` taint no toleration tolerates, or None."""
    for taint in taints:
        if taint.get("effect") not in _FILTERED_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_string(taint: Mapping[str, Any]) -> str:
    """A taint as Go's ``%s`` prints a ``corev1.Taint`` value: ``{key value effect <nil>}``
    (the last field is ``timeAdded``)."""
    added = taint.get("timeAdded")
    shown_added = "<nil>" if added is None else str(added)
    return (
        f"{{{taint.get('key') or ''} {taint.get('value') or ''} "
        f"{taint.get('effect') or ''} {shown_added}}}"
    )


def _requirement(expr: Mapping[str, Any], path: str) -> Requirement:
    operator = str(expr.get("operator", ""))
    op = _OPERATORS.get(operator)
    if op is None:
        # field.NotSupported(<path>.operator, op, nil), as nodeSelectorRequirementsAsSelector
        raise PodSetMatchError(f"{path}.operator: Unsupported value: {go_quote(operator)}")
    values = expr.get("values")
    try:
        return new_requirement(
            str(expr.get("key", "")),
            op,
            None if values is None else [str(v) for v in values],
            path,
        )
    except SelectorError as err:
        raise PodSetMatchError(str(err)) from err


def _reduced_terms(podset: PodSet, keys: frozenset[str]) -> list[list[Mapping[str, Any]]]:
    # Only expressions on the flavor's own label keys count; a term that keeps none matches
    # every flavor, so the whole affinity drops out (the terms are ORed).
    reduced: list[list[Mapping[str, Any]]] = []
    for term in podset.required_node_affinity:
        kept = [e for e in term.get("matchExpressions") or () if e.get("key") in keys]
        if not kept:
            return []
        reduced.append(kept)
    return reduced


def matches_node_affinity(podset: PodSet, flavor: ResourceFlavor) -> bool:
    """Whether the podSet's node selector and required node affinity, reduced to the flavor's
    label keys, match the flavor's labels; raises :class:`PodSetMatchError` when a term that
    decides it does not parse (a term that fails to parse is skipped if another one matches,
    as upstream's lazy-error selector does)."""
    labels = flavor.node_labels
    keys = frozenset(labels)
    for key, value in podset.node_selector.items():
        if key in keys and labels.get(key) != value:
            return False
    terms = _reduced_terms(podset, keys)
    if not terms:
        return True
    errors: list[str] = []
    for i, term in enumerate(terms):
        reqs: list[Requirement] = []
        term_errors: list[str] = []
        for j, e in enumerate(term):
            try:
                reqs.append(_requirement(e, f"nodeSelectorTerms[{i}].matchExpressions[{j}]"))
            except PodSetMatchError as err:
                term_errors.append(str(err))
        if term_errors:
            errors.extend(term_errors)
            continue
        if all(r.matches(labels) for r in reqs):
            return True
    if errors:
        raise PodSetMatchError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return False


def flavor_mismatch(podset: PodSet, flavor: ResourceFlavor) -> str | None:
    """Upstream's reason the flavor cannot host the podSet (an untolerated taint first, then
    the node affinity), or None when it can; raises :class:`PodSetMatchError` as
    :func:`matches_node_affinity`."""
    taint = untolerated_taint(flavor.node_taints, (*podset.tolerations, *flavor.tolerations))
    if taint is not None:
        return f"untolerated taint {taint_string(taint)} in flavor {flavor.name}"
    if not matches_node_affinity(podset, flavor):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None
