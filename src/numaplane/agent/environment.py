"""A container's environment and argv, with the kubelet's ``$(VAR)`` expansion.

As the kubelet: each ``env`` value may refer to variables defined before it (``$(NAME)``); the
command and args may refer to the final environment; a reference to an undefined variable is
kept as written, ``$$`` stands for a literal ``$``. Device plugin variables (``extra``) come
before the container's own, which win on conflicts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from numaplane.agent.podstatus import ContainerSpec

#: ``PATH`` of a container that sets none (containerd's default).
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """``text`` with every ``$(NAME)`` that ``lookup`` knows replaced, and ``$$`` as ``$``."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
        elif following == "(" and (end := text.find(")", i + 2)) != -1:
            name = text[i + 2 : end]
            value = lookup(name)
            out.append(value if value is not None else f"$({name})")
            i = end + 1
        else:
            # Not a reference: the '$' stays, the next character is read normally.
            out.append("$")
            i += 1
    return "".join(out)


def container_env(spec: ContainerSpec, extra: Mapping[str, str]) -> dict[str, str]:
    """The process environment: defaults, then ``extra``, then the container's (expanded)."""
    env = {"PATH": DEFAULT_PATH, "HOME": "/root" if os.geteuid() == 0 else "/"}
    env.update(extra)
    own: dict[str, str] = {}
    for name, value in spec.env:
        own[name] = expand(value, own.get)
    env.update(own)
    return env


def container_argv(spec: ContainerSpec, env: Mapping[str, str]) -> tuple[str, ...]:
    """``command + args`` with references to ``env`` expanded."""
    return tuple(expand(part, env.get) for part in (*spec.command, *spec.args))
