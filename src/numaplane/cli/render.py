"""The one way commands print rich tables and trees: user and engine text is never markup.

A pod named ``[bold]web[/bold]`` or a kubelet message starting ``[memorymanager]`` must print as
written. ``console()`` gives a console that takes every string literally (no markup, no
``:emoji:`` codes, no highlighting); styles are applied only through ``styled``, explicitly.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text


def console(**options: Any) -> Console:
    """A console printing strings as given; ``options`` as for ``rich.console.Console``."""
    return Console(markup=False, emoji=False, highlight=False, **options)


def styled(text: str, style: str) -> Text:
    """``text`` in ``style`` (e.g. ``"bold red"``), still literal."""
    return Text(text, style=style)
