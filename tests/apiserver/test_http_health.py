"""/healthz, /livez, /readyz as k8s.io/apiserver answers them: ok, ?verbose, ?exclude, one
check by path, a failing check's reason withheld; /version's document."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.apiserver.http_health import HealthCheck, HealthReply, health, version_info

CHECKS = (
    HealthCheck("ping", lambda: None),
    HealthCheck("etcd", lambda: None),
)
FAILING = (
    HealthCheck("ping", lambda: None),
    HealthCheck("shutdown", lambda: "process is shutting down"),
)


@dataclass(frozen=True)
class Case:
    name: str
    subpath: tuple[str, ...]
    query: dict[str, list[str]]
    checks: tuple[HealthCheck, ...]
    want: HealthReply


CASES = (
    Case("plain", (), {}, CHECKS, HealthReply(200, "ok")),
    Case(
        "verbose",
        (),
        {"verbose": [""]},
        CHECKS,
        HealthReply(200, "[+]ping ok\n[+]etcd ok\nreadyz check passed\n"),
    ),
    Case(
        "excluded",
        (),
        {"verbose": ["1"], "exclude": ["etcd"]},
        CHECKS,
        HealthReply(200, "[+]ping ok\n[+]etcd excluded: ok\nreadyz check passed\n"),
    ),
    Case("one check", ("ping",), {}, CHECKS, HealthReply(200, "ok")),
    Case("unknown check", ("nope",), {}, CHECKS, HealthReply(404, "404 page not found\n")),
    Case(
        "failing",
        (),
        {},
        FAILING,
        HealthReply(500, "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"),
    ),
    Case(
        "failing check alone",
        ("shutdown",),
        {},
        FAILING,
        HealthReply(500, "internal server error: process is shutting down\n"),
    ),
    Case(
        "excluding the failure",
        (),
        {"exclude": ["shutdown"]},
        FAILING,
        HealthReply(200, "ok"),
    ),
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_health(case: Case) -> None:
    assert health("readyz", case.subpath, case.query, case.checks) == case.want


def test_version_names_a_kubernetes_release_kubectl_accepts() -> None:
    info = version_info()
    assert (info["major"], info["minor"]) == ("1", "32")
    assert info["gitVersion"].startswith("v1.32.")
    assert set(info) >= {"gitCommit", "platform", "goVersion", "buildDate", "compiler"}
