"""Go's RE2 patterns (schema ``pattern``, CEL ``matches``/``find``) read with Python's ``re``.

The two dialects agree on what CRDs write, with two differences handled here: RE2's ``\\d``,
``\\w`` and ``\\s`` are ASCII-only, and RE2 accepts a flag group such as ``(?i)`` anywhere
(``^(?i)[a-z]+$`` in Kueue's CRDs), applying it to the rest of the enclosing group, where
Python wants global flags first. A top-level flag group is rewritten as a scoped group over
each later top-level alternative, and ``\\z`` as Python's ``\\Z``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

_FLAGS: Final = re.compile(r"\(\?([imsU]+)\)")


def _scan(pattern: str, index: int) -> tuple[int, bool]:
    """Before ``pattern[index]``: the group depth, and whether that character is escaped or
    inside a character class (where parentheses and ``|`` are literal)."""
    depth = 0
    escaped = False
    in_class = False
    for char in pattern[:index]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
    return depth, escaped or in_class


def translate(pattern: str) -> str:
    """``pattern`` as Python's ``re`` reads the same language."""
    out = pattern.replace("\\z", "\\Z")
    for found in _FLAGS.finditer(out):
        if found.start() == 0 or _scan(out, found.start())[0] != 0:
            continue
        flags = found.group(1).replace("U", "")
        rest = out[found.end() :]
        # The flags reach every later top-level alternative too: scope each one.
        pieces = _top_level_alternatives(rest)
        scoped = "|".join(f"(?{flags}:{p})" if flags else p for p in pieces)
        return translate(out[: found.start()] + scoped)
    return out


def _top_level_alternatives(pattern: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for index, char in enumerate(pattern):
        if char == "|" and _scan(pattern, index) == (0, False):
            pieces.append(pattern[start:index])
            start = index + 1
    pieces.append(pattern[start:])
    return pieces


@lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with RE2's meaning (``re.error`` when it cannot be read)."""
    return re.compile(translate(pattern), re.ASCII)
