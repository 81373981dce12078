"""Label and field selectors, parsed, validated, printed and matched as apimachinery's
``labels`` and ``fields`` packages do (same grammar, same error wording), so that a bad
``?labelSelector=`` gets the message kubectl users know and a good one selects the same objects.

Pure functions: the API server uses them for list, watch and deletecollection, the scheduler of a
later issue for its own selectors. (Over 400 lines: one grammar each for labels and fields, kept
together because callers use them as one interface.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, Final

from numaplane.api.validation import is_qualified_name, is_valid_label_value
from numaplane.errors import NumaplaneError
from numaplane.gofmt import go_quote


class SelectorError(NumaplaneError):
    """A label or field selector that does not parse; ``str()`` is upstream's message (the API
    server answers it as a 400 BadRequest)."""


def _go_string_slice(values: list[str] | None) -> str:
    # field.Invalid prints a []string bad value with Go's %#v.
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _invalid(path: str, shown_value: str, detail: str) -> str:
    # field.Error.Error(): "<path>: Invalid value: <value>: <detail>"
    return f"{path}: Invalid value: {shown_value}: {detail}"


def _aggregate(messages: list[str]) -> str:
    # utilerrors.Aggregate: one error bare, several deduplicated inside brackets.
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    return "[" + ", ".join(seen) + "]"


# --- label selectors ---------------------------------------------------------------------------


class Operator(StrEnum):
    """``selection.Operator`` values that label selectors use."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")


def _parse_int64(text: str) -> int | None:
    # strconv.ParseInt(text, 10, 64)
    if _INT64_RE.fullmatch(text) is None:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


@dataclass(frozen=True)
class Requirement:
    """One requirement of a label selector: ``key``, ``operator`` and ``values`` (sorted and
    unique when parsed from text, as upstream's string sets give them)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement (upstream's ``Requirement.Matches``)."""
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels or len(self.values) != 1:
            return False
        have = _parse_int64(labels[self.key])
        want = _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        if op is Operator.EXISTS:
            return self.key
        shown = {
            Operator.EQUALS: "=",
            Operator.DOUBLE_EQUALS: "==",
            Operator.NOT_EQUALS: "!=",
            Operator.IN: " in ",
            Operator.NOT_IN: " notin ",
            Operator.GREATER_THAN: ">",
            Operator.LESS_THAN: "<",
        }[op]
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op in (Operator.IN, Operator.NOT_IN):
            values = f"({values})"
        return f"{self.key}{shown}{values}"


def new_requirement(
    key: str, operator: Operator, values: list[str] | None, path: str = ""
) -> Requirement:
    """apimachinery's ``NewRequirement``: validate ``key``, ``operator`` and ``values`` and build
    the requirement, or raise :class:`SelectorError` with upstream's aggregated field errors.
    ``path`` prefixes the field paths (``key``, ``values[0][key]``)."""
    errs: list[str] = []
    prefix = f"{path}." if path else ""
    key_problems = is_qualified_name(key)
    if key_problems:
        errs.append(_invalid(f"{prefix}key", go_quote(key), "; ".join(key_problems)))
    vals = list(values) if values is not None else []
    values_path = f"{prefix}values"
    if operator in (Operator.IN, Operator.NOT_IN):
        if not vals:
            errs.append(
                _invalid(
                    values_path,
                    _go_string_slice(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(vals) != 1:
            errs.append(
                _invalid(
                    values_path,
                    _go_string_slice(values),
                    "exact-match compatibility requires one single value",
                )
            )
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if vals:
            errs.append(
                _invalid(
                    values_path,
                    _go_string_slice(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    else:
        if len(vals) != 1:
            errs.append(
                _invalid(
                    values_path,
                    _go_string_slice(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                errs.append(
                    _invalid(
                        f"{values_path}[{i}]",
                        go_quote(v),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(vals):
        problems = is_valid_label_value(v)
        if problems:
            errs.append(_invalid(f"{values_path}[{i}][{key}]", go_quote(v), "; ".join(problems)))
    if errs:
        raise SelectorError(_aggregate(errs))
    return Requirement(key, operator, tuple(vals))


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: its requirements sorted by key (stable, as upstream's sort keeps
    duplicates of a key in their written order only by chance; we keep them written order).

    ``nothing`` is ``labels.Nothing()`` (a nil ``metav1.LabelSelector``): it matches no object.
    The empty selector matches every object.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` is selected."""
        if self.nothing:
            return False
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    def empty(self) -> bool:
        """Whether the selector selects everything (upstream's ``Empty``)."""
        return not self.nothing and not self.requirements

    def requires_exact_match(self, key: str) -> str | None:
        """The one value ``key`` must have, when the selector pins it (``RequiresExactMatch``)."""
        for r in self.requirements:
            if r.key == key:
                exact = (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.IN)
                if r.operator in exact and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING: Final = LabelSelector()
NOTHING: Final = LabelSelector(nothing=True)


class _Tok(Enum):
    ERROR = 0
    END = 1
    CLOSED_PAR = 2
    COMMA = 3
    DOES_NOT_EXIST = 4
    DOUBLE_EQUALS = 5
    EQUALS = 6
    GREATER_THAN = 7
    IDENTIFIER = 8
    IN = 9
    LESS_THAN = 10
    NOT_EQUALS = 11
    NOT_IN = 12
    OPEN_PAR = 13


_STRING_TO_TOKEN: Final = {
    ")": _Tok.CLOSED_PAR,
    ",": _Tok.COMMA,
    "!": _Tok.DOES_NOT_EXIST,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER_THAN,
    "in": _Tok.IN,
    "<": _Tok.LESS_THAN,
    "!=": _Tok.NOT_EQUALS,
    "notin": _Tok.NOT_IN,
    "(": _Tok.OPEN_PAR,
}
_WHITESPACE: Final = frozenset(" \t\r\n")
_SPECIAL: Final = frozenset("=!(),><")
_BINARY_OPERATORS: Final = "in, notin, =, ==, !=, gt, lt"


def _lex(text: str) -> list[tuple[_Tok, str]]:
    """The tokens of ``text`` as upstream's lexer scans them (a NUL ends the input, as Go's
    lexer reads byte 0 as the end)."""
    text = text.split("\0", 1)[0]
    tokens: list[tuple[_Tok, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            tokens.append((_Tok.END, ""))
            return tokens
        if text[pos] in _SPECIAL:
            # The longest run of special characters that is still a known symbol.
            best: tuple[_Tok, str] | None = None
            end = pos
            while end < n and text[end] in _SPECIAL:
                candidate = text[pos : end + 1]
                tok = _STRING_TO_TOKEN.get(candidate)
                if tok is not None:
                    best = (tok, candidate)
                elif best is not None:
                    break
                end += 1
            if best is None:
                tokens.append((_Tok.ERROR, f"error expected: keyword found '{text[pos:end]}'"))
                pos = end
            else:
                tokens.append(best)
                pos += len(best[1])
            continue
        start = pos
        while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        word = text[start:pos]
        tokens.append((_STRING_TO_TOKEN.get(word, _Tok.IDENTIFIER), word))


class _Parser:
    """Upstream's recursive-descent parser over the scanned tokens; in the values context the
    keywords ``in``/``notin`` read as identifiers (``x in (in)``)."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def lookahead(self, values: bool) -> tuple[_Tok, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_Tok.IN, _Tok.NOT_IN):
            tok = _Tok.IDENTIFIER
        return tok, lit

    def consume(self, values: bool) -> tuple[_Tok, str]:
        tok, lit = self.lookahead(values)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_Tok.IDENTIFIER, _Tok.DOES_NOT_EXIST):
                try:
                    requirements.append(self.requirement())
                except SelectorError as err:
                    raise SelectorError(f"unable to parse requirement: {err}") from None
                t, lit2 = self.consume(True)
                if t is _Tok.END:
                    return requirements
                if t is _Tok.COMMA:
                    t2, lit3 = self.lookahead(True)
                    if t2 not in (_Tok.IDENTIFIER, _Tok.DOES_NOT_EXIST):
                        raise SelectorError(f"found '{lit3}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok is _Tok.END:
                return requirements
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        key, operator = self.key_and_inferred_operator()
        if operator is not None:
            return new_requirement(key, operator, [])
        operator = self.operator()
        in_set = operator in (Operator.IN, Operator.NOT_IN)
        values = self.values() if in_set else self.exact_value()
        return new_requirement(key, operator, sorted(values))

    def key_and_inferred_operator(self) -> tuple[str, Operator | None]:
        operator: Operator | None = None
        tok, lit = self.consume(True)
        if tok is _Tok.DOES_NOT_EXIST:
            operator = Operator.DOES_NOT_EXIST
            tok, lit = self.consume(True)
        if tok is not _Tok.IDENTIFIER:
            raise SelectorError(f"found '{lit}', expected: identifier")
        problems = is_qualified_name(lit)
        if problems:
            # Upstream validates with the parser's nil field path, printed "<nil>".
            raise SelectorError(_invalid("<nil>", go_quote(lit), "; ".join(problems)))
        if self.lookahead(True)[0] in (_Tok.END, _Tok.COMMA) and operator is None:
            operator = Operator.EXISTS
        return lit, operator

    def operator(self) -> Operator:
        tok, lit = self.consume(False)
        ops = {
            _Tok.IN: Operator.IN,
            _Tok.EQUALS: Operator.EQUALS,
            _Tok.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
            _Tok.GREATER_THAN: Operator.GREATER_THAN,
            _Tok.LESS_THAN: Operator.LESS_THAN,
            _Tok.NOT_IN: Operator.NOT_IN,
            _Tok.NOT_EQUALS: Operator.NOT_EQUALS,
        }
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        return ops[tok]

    def values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok is not _Tok.OPEN_PAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_Tok.IDENTIFIER, _Tok.COMMA):
            found = self.identifiers()
            if self.consume(True)[0] is not _Tok.CLOSED_PAR:
                # Upstream quotes the first token of the list here, not the offending one.
                raise SelectorError(f"found '{lit}', expected: ')'")
            return found
        if tok is _Tok.CLOSED_PAR:
            self.consume(True)
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        found: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok is _Tok.IDENTIFIER:
                found.add(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 is _Tok.COMMA:
                    continue
                if tok2 is _Tok.CLOSED_PAR:
                    return found
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok is _Tok.COMMA:
                if not found:
                    found.add("")
                tok2, _ = self.lookahead(True)
                if tok2 is _Tok.CLOSED_PAR:
                    found.add("")
                    return found
                if tok2 is _Tok.COMMA:
                    found.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.lookahead(True)
        if tok in (_Tok.END, _Tok.COMMA):
            return {""}
        tok, lit = self.consume(True)
        if tok is _Tok.IDENTIFIER:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """``labels.Parse``: the selector ``text`` (``a=b,c in (d,e),!f``) or a
    :class:`SelectorError` with upstream's message. The empty string selects everything."""
    requirements = _Parser(text).parse()
    # Go's sort.Sort is not stable; a stable sort gives the same order whenever keys differ.
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


_DICT_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def label_selector_from_dict(selector: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: a ``{matchLabels, matchExpressions}`` dict as a
    selector. ``None`` selects nothing, an empty one everything."""
    if selector is None:
        return NOTHING
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key, value in match_labels.items():
        requirements.append(new_requirement(str(key), Operator.EQUALS, [str(value)]))
    for expr in expressions:
        raw_op = expr.get("operator", "")
        op = _DICT_OPERATORS.get(raw_op)
        if op is None:
            raise SelectorError(f"{go_quote(str(raw_op))} is not a valid label selector operator")
        raw_values = expr.get("values")
        values = None if not raw_values else [str(v) for v in raw_values]
        requirements.append(new_requirement(str(expr.get("key", "")), op, values))
    requirements.sort(key=lambda r: r.key)
    return LabelSelector(tuple(requirements))


# --- field selectors ---------------------------------------------------------------------------


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
