"""Decoded YAML whose aliases do not blow up: one check for every YAML input numaplane reads.

PyYAML decodes an alias as a second reference to the same object, so a small file of nested
aliases (a "billion laughs" document) decodes quickly, but every later walk of it, validation
or an error message quoting a value, expands it. Pod manifests, kubelet configurations, device
inventories and traces all pass their decoded documents through ``check_aliases`` first, the
way Go's YAML decoder refuses "excessive aliasing" before Kubernetes sees the object.
"""

from __future__ import annotations

ALIAS_SLACK = 10_000
"""Values allowed beyond the text's length (an alias-free document has fewer values than
characters, so only aliasing can exceed ``len(text) + ALIAS_SLACK``)."""


class AliasError(ValueError):
    """A decoded document expands past its budget, or contains itself through an alias."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_aliases(root: object, budget: int) -> None:
    """Raise ``AliasError`` if ``root`` expands past ``budget`` values or refers to itself.

    The walk counts each shared object once (memoised by identity, which is exactly what an
    alias shares) and uses an explicit stack, so it is linear in the decoded size and cannot
    overflow the interpreter's stack.
    """
    sizes: dict[int, int] = {}
    open_ids: set[int] = set()
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        obj, closing = stack.pop()
        if not isinstance(obj, list | dict):
            continue
        children = list(obj.values()) if isinstance(obj, dict) else obj
        key = id(obj)
        if closing:
            open_ids.discard(key)
            size = 1 + (len(obj) if isinstance(obj, dict) else 0)
            size += sum(sizes[id(c)] if isinstance(c, list | dict) else 1 for c in children)
            if size > budget:
                raise AliasError("YAML aliases expand the document past what its text could hold")
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_ids:
            raise AliasError("a YAML alias refers to a value that contains it")
        open_ids.add(key)
        stack.append((obj, True))
        stack.extend((c, False) for c in children if isinstance(c, list | dict))


def check_text_aliases(root: object, text: str) -> None:
    """``check_aliases`` with the budget a document decoded from ``text`` may have."""
    check_aliases(root, len(text) + ALIAS_SLACK)
