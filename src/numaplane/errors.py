"""The root of every error numaplane raises on purpose.

Each subsystem roots its own error tree here, so callers can catch ``NumaplaneError`` to tell
"bad input or a refused decision" apart from a bug (anything else).
"""

from __future__ import annotations


class NumaplaneError(Exception):
    """Base class of all deliberate numaplane errors."""


class InputError(NumaplaneError):
    """Input given by a user (a file, a flag, a manifest) is unusable.

    ``source`` names the input (a path, a flag) and ``field`` the place inside it, when known;
    ``str()`` renders one line a person can act on.
    """

    def __init__(self, source: str, reason: str, field: str | None = None) -> None:
        self.source = source
        self.reason = reason
        self.field = field
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {reason}")


def escape_unprintable(text: str) -> str:
    """``text`` with each unprintable character (a line break, a control character) written as
    its Python escape, so that a message quoting user input stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
