"""Field selectors as apimachinery's ``fields`` package: ``metadata.name=x,spec.nodeName!=``,
with its escaping (``\\``, ``\\,``, ``\\=``), parsing, printing, matching and error wording."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from numaplane.api.selectors import Operator, SelectorError


def escape_field_value(value: str) -> str:
    """``fields.EscapeValue``: ``\\``, ``,`` and ``=`` escaped with a backslash."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(value: str) -> str:
    """``fields.UnescapeValue``; a bad escape or a bare ``,``/``=`` raises upstream's error."""
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for c in value:
        if in_slash:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            raise SelectorError(f"invalid field selector: unescaped character in value: {c}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


@dataclass(frozen=True)
class FieldRequirement:
    """One term of a field selector: ``field`` ``=``/``!=`` ``value`` (``==`` reads as ``=``)."""

    field: str
    operator: Operator  # EQUALS or NOT_EQUALS
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether ``fields`` satisfy the term (an absent field reads as ``""``, as upstream)."""
        have = fields.get(self.field, "")
        return have == self.value if self.operator is Operator.EQUALS else have != self.value

    def __str__(self) -> str:
        op = "=" if self.operator is Operator.EQUALS else "!="
        return f"{self.field}{op}{escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector (the AND of its terms, sorted as upstream sorts the raw terms)."""

    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether an object whose selectable fields are ``fields`` is selected."""
        return all(r.matches(fields) for r in self.requirements)

    def empty(self) -> bool:
        """Whether the selector selects everything."""
        return not self.requirements

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal, when a term pins it (``RequiresExactMatch``)."""
        for r in self.requirements:
            if r.field == field and r.operator is Operator.EQUALS:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _split_terms(text: str) -> list[str]:
    # Split on commas that no backslash escapes.
    if not text:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    # The first position where "!=", "==" or "=" starts (in that preference order).
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def parse_field_selector(text: str) -> FieldSelector:
    """``fields.ParseSelector``: ``metadata.name=x,status.phase!=Running`` or a
    :class:`SelectorError` worded as upstream (``invalid selector: '...'; can't understand
    '...'``). The empty string selects everything. Field names are not checked here: which
    fields a kind supports is the caller's (``field label not supported: ...``)."""
    requirements: list[FieldRequirement] = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        value = unescape_field_value(rhs)
        operator = Operator.NOT_EQUALS if op == "!=" else Operator.EQUALS
        requirements.append(FieldRequirement(lhs, operator, value))
    return FieldSelector(tuple(requirements))
