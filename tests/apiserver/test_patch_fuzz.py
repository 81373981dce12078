"""Robustness: any JSON patch document either applies or is refused with a status error, never
an unexpected exception (the HTTP layer must answer every request with a Status)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.apiserver.apply import apply
from numaplane.apiserver.errors import StatusError
from numaplane.apiserver.patch import json_patch, merge_patch, strategic_merge_patch

_KEYS = st.sampled_from(
    ["name", "image", "containers", "env", "value", "$patch", "$retainKeys", "labels", "a"]
)
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from(["a", "b", "delete", "replace"])
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=15,
)
_DIRECTIVE_KEYS = st.sampled_from(
    [
        "$setElementOrder/containers",
        "$deleteFromPrimitiveList/finalizers",
        "$setElementOrder/finalizers",
        "$retainKeys",
        "$patch",
        "containers",
        "finalizers",
        "labels",
    ]
)
_SPEC = st.dictionaries(_DIRECTIVE_KEYS, _JSON, max_size=4)


def _code(action: Callable[[], object]) -> int:
    # 200 when the action succeeds, else the status code it was refused with.
    try:
        action()
    except StatusError as err:
        return err.code
    return 200


_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "finalizers": ["x", "y"], "labels": {"a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "E", "value": "1"}]}]},
}


@settings(max_examples=300)
@given(_SPEC, _SPEC)
def test_strategic_merge_patch_never_fails_unexpectedly(spec: Any, meta: Any) -> None:
    patch = {"spec": spec, "metadata": meta}
    code = _code(lambda: strategic_merge_patch(_POD, patch, ("", "Pod")))
    assert code in (200, 400, 422, 500)


_POINTERS = st.one_of(
    st.sampled_from(["", "/", "/metadata", "/metadata/labels/a", "/spec/containers/0", "/x/-"]),
    _JSON,
)
_OPS = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "x"])},
    optional={"path": _POINTERS, "from": _POINTERS, "value": _JSON},
)


@settings(max_examples=300)
@given(st.lists(_OPS, max_size=4))
def test_json_patch_never_fails_unexpectedly(ops: Any) -> None:
    assert _code(lambda: json_patch(_POD, ops)) in (200, 400, 413, 422)


@given(_JSON)
def test_merge_patch_never_fails_unexpectedly(patch: Any) -> None:
    assert _code(lambda: merge_patch(_POD, patch)) in (200, 400)


@given(_SPEC)
def test_apply_never_fails_unexpectedly(spec: Any) -> None:
    config = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    assert _code(lambda: apply(_POD, config, "m", False, "2024-01-01T00:00:00Z")) in (
        200,
        400,
        409,
        500,
    )
