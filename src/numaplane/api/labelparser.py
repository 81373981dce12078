"""The label selector grammar of apimachinery's ``labels`` package: a lexer and a recursive
descent parser turning ``a=b,c in (d,e),!f`` into :class:`~numaplane.api.selectors.LabelSelector`
requirements, with upstream's error wording (``found ',', expected: identifier``)."""

from __future__ import annotations

from enum import Enum
from typing import Final

from numaplane.api.selectors import (
    LabelSelector,
    Operator,
    Requirement,
    SelectorError,
    invalid_value_text,
    new_requirement,
)
from numaplane.api.validation import is_qualified_name
from numaplane.gofmt import go_quote


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
            raise SelectorError(invalid_value_text("<nil>", go_quote(lit), "; ".join(problems)))
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
