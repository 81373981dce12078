"""Running the ``numaplane`` entry point in-process, as a user's shell would, for tests."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from numaplane.cli.main import main


@dataclass(frozen=True)
class Outcome:
    """What one command did: exit status and both streams."""

    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        """stderr's non-empty lines."""
        return [line for line in self.err.splitlines() if line.strip()]


def invoke(*argv: str) -> Outcome:
    """Run ``numaplane ARGV`` through ``main`` (its error handling included).

    Anything but ``SystemExit`` escapes, so a crash fails the test with its traceback.
    """
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code
    status = code if isinstance(code, int) else (0 if code is None else 1)
    return Outcome(status, out.getvalue(), err.getvalue())


def assert_one_line_error(outcome: Outcome, *names: str) -> None:
    """Exit status 2 and exactly one ``error:`` line on stderr naming each of ``names``."""
    assert outcome.code == 2, outcome
    lines = outcome.error_lines
    assert len(lines) == 1, outcome.err
    assert lines[0].startswith("error: "), lines
    for name in names:
        assert name in lines[0], (name, lines[0])
