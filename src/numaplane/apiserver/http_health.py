"""``/healthz``, ``/livez``, ``/readyz`` and ``/version`` as k8s.io/apiserver serves them.

Health endpoints answer ``ok`` (text/plain), list every check with ``?verbose``
(``[+]ping ok`` ... ``readyz check passed``), skip checks named by ``?exclude=``, and serve each
check alone at ``/readyz/NAME``. A failing check makes the endpoint answer 500 with the failing
check's reason withheld, as upstream does.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from numaplane import __version__

#: The Kubernetes release whose API this server speaks (kubectl warns on a skew of more than one
#: minor version, so the figure matters).
KUBE_MAJOR = "1"
KUBE_MINOR = "32"
GIT_VERSION = f"v{KUBE_MAJOR}.{KUBE_MINOR}.0"

HEALTH_ENDPOINTS = ("healthz", "livez", "readyz")

#: A check answers ``None`` when healthy, else why not.
CheckFunc = Callable[[], str | None]


@dataclass(frozen=True)
class HealthCheck:
    """One named check (``ping``, ``log``, ``storage``, ``shutdown``)."""

    name: str
    check: CheckFunc


@dataclass(frozen=True)
class HealthReply:
    """What a health endpoint answers: status code and plain-text body."""

    code: int
    body: str


def version_info() -> dict[str, Any]:
    """The ``/version`` document (``version.Info``)."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)
    return {
        "major": KUBE_MAJOR,
        "minor": KUBE_MINOR,
        "gitVersion": GIT_VERSION,
        "gitCommit": f"numaplane-{__version__}",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": f"python{platform.python_version()}",
        "compiler": "numaplane",
        "platform": f"{platform.system().lower()}/{arch}",
    }


def health(
    endpoint: str,
    subpath: Sequence[str],
    query: Mapping[str, Sequence[str]],
    checks: Sequence[HealthCheck],
) -> HealthReply:
    """Answer ``/ENDPOINT[/CHECK]?verbose&exclude=...`` over ``checks``."""
    if subpath:
        if len(subpath) != 1:
            return HealthReply(404, "404 page not found\n")
        for check in checks:
            if check.name == subpath[0]:
                why = check.check()
                if why is None:
                    return HealthReply(200, "ok")
                return HealthReply(500, f"internal server error: {why}\n")
        return HealthReply(404, "404 page not found\n")
    excluded = set(query.get("exclude", ()))
    lines: list[str] = []
    failed = False
    for check in checks:
        if check.name in excluded:
            lines.append(f"[+]{check.name} excluded: ok\n")
            excluded.discard(check.name)
            continue
        if check.check() is None:
            lines.append(f"[+]{check.name} ok\n")
        else:
            failed = True
            lines.append(f"[-]{check.name} failed: reason withheld\n")
    if excluded:
        quoted = ", ".join(f'"{name}"' for name in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}\n")
    if failed:
        return HealthReply(500, "".join(lines) + f"{endpoint} check failed\n")
    if "verbose" not in query:
        return HealthReply(200, "ok")
    return HealthReply(200, "".join(lines) + f"{endpoint} check passed\n")
