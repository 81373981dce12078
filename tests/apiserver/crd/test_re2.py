"""RE2 patterns read with Python's re: flag groups anywhere, ASCII classes, \\z."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver.crd.re2 import compile_re2


@dataclass(frozen=True)
class Case:
    name: str
    pattern: str
    text: str
    matches: bool


CASES = [
    Case("flags after an anchor", r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$", "Pod-X", True),
    Case("flags after an anchor still anchored", r"^(?i)[a-z]+$", "ab1", False),
    Case("flags reach later alternatives", r"^x(?i)b$|^c$", "C", True),
    Case("flags do not reach earlier text", r"^x(?i)b$", "Xb", False),
    Case("digits are ASCII", r"^\d+$", "١٢", False),
    Case("word characters are ASCII", r"^\w+$", "é", False),
    Case("end of text", r"^ab\z", "ab", True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_re2(case: Case) -> None:
    assert (compile_re2(case.pattern).search(case.text) is not None) is case.matches
