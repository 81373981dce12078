"""The ``Active`` conditions of MultiKueueClusters and MultiKueue AdmissionChecks, and the
reconnect backoff, with upstream's reasons and messages (SPEC §3.13)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from numaplane.kueue.api.conditions import parse_time
from numaplane.kueue.multikueue.clusterstatus import (
    CONNECTED,
    ConnectionState,
    admission_check_active,
    cluster_active_condition,
    condition_differs,
    config_name,
    config_not_found,
    connection_failed,
    is_cluster_active,
    load_failed,
    parameters_error,
    retry_after,
)

NOW = parse_time("2026-11-24T14:00:00Z")


@dataclass(frozen=True)
class StateCase:
    name: str
    state: ConnectionState
    condition: tuple[str, str, str]


STATES = [
    StateCase("connected", CONNECTED, ("True", "Active", "Connected")),
    StateCase(
        "secret missing",
        load_failed("BadKubeConfig", 'Secret "testing-secret" not found'),
        ("False", "BadKubeConfig", 'load client config failed: Secret "testing-secret" not found'),
    ),
    StateCase(
        "refused after failed attempts",
        load_failed("InsecureKubeConfig", "tokenFile is not allowed", 2, NOW + 10),
        (
            "False",
            "InsecureKubeConfig",
            "load client config failed: tokenFile is not allowed; connection attempts: 2, "
            "next connection attempt: 2026-11-24T14:00:10Z",
        ),
    ),
    StateCase(
        "connection failed",
        connection_failed("dial tcp 127.0.0.1:1: connection refused", 1, NOW + 5.7),
        (
            "False",
            "ClientConnectionFailed",
            "dial tcp 127.0.0.1:1: connection refused; connection attempts: 1, "
            "next connection attempt: 2026-11-24T14:00:05Z",
        ),
    ),
]


@pytest.mark.parametrize("case", STATES, ids=[c.name for c in STATES])
def test_cluster_active_condition(case: StateCase) -> None:
    assert cluster_active_condition(case.state) == case.condition


@dataclass(frozen=True)
class RetryCase:
    name: str
    attempts: int
    seconds: float
    base: float = 5.0


RETRIES = [
    RetryCase("none failed", 0, 0.0),
    RetryCase("first", 1, 5.0),
    RetryCase("second", 2, 10.0),
    RetryCase("seventh", 7, 320.0),
    RetryCase("capped past seven", 12, 320.0),
    RetryCase("injected base", 3, 0.4, base=0.1),
]


@pytest.mark.parametrize("case", RETRIES, ids=[c.name for c in RETRIES])
def test_retry_after(case: RetryCase) -> None:
    assert retry_after(case.attempts, case.base) == pytest.approx(case.seconds)


@dataclass(frozen=True)
class DiffCase:
    name: str
    conditions: list[dict[str, Any]] | None
    differs: bool


SAME = {"type": "Active", "status": "True", "reason": "Active", "message": "Connected"}
DIFFS = [
    DiffCase("missing", None, True),
    DiffCase("other type only", [{**SAME, "type": "Other"}], True),
    DiffCase("same (time and generation ignored)", [{**SAME, "observedGeneration": 4}], False),
    DiffCase("status", [{**SAME, "status": "False"}], True),
    DiffCase("reason", [{**SAME, "reason": "X"}], True),
    DiffCase("message", [{**SAME, "message": "X"}], True),
]


@pytest.mark.parametrize("case", DIFFS, ids=[c.name for c in DIFFS])
def test_condition_differs(case: DiffCase) -> None:
    wanted = ("True", "Active", "Connected")
    assert condition_differs(case.conditions, "Active", wanted) is case.differs


def test_is_cluster_active_reads_the_condition() -> None:
    assert is_cluster_active({"status": {"conditions": [SAME]}})
    assert not is_cluster_active({"status": {"conditions": [{**SAME, "status": "False"}]}})
    assert not is_cluster_active({})


@dataclass(frozen=True)
class ParamsCase:
    name: str
    parameters: dict[str, Any] | None
    error: str | None


def params(**over: Any) -> dict[str, Any]:
    return {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "cfg", **over}


PARAMS = [
    ParamsCase("valid", params(), None),
    ParamsCase("missing", None, "missing parameters reference"),
    ParamsCase("empty name", params(name=""), "empty name: bad parameters reference"),
    ParamsCase(
        "wrong group",
        params(apiGroup="x.io"),
        'wrong group "x.io", expecting "kueue.x-k8s.io": bad parameters reference',
    ),
    ParamsCase(
        "wrong kind",
        params(kind="ProvisioningRequestConfig"),
        'wrong kind "ProvisioningRequestConfig", expecting "MultiKueueConfig": '
        "bad parameters reference",
    ),
]


@pytest.mark.parametrize("case", PARAMS, ids=[c.name for c in PARAMS])
def test_parameters_error(case: ParamsCase) -> None:
    check: dict[str, Any] = {"spec": {"controllerName": "kueue.x-k8s.io/multikueue"}}
    if case.parameters is not None:
        check["spec"]["parameters"] = case.parameters
    assert parameters_error(check) == case.error
    assert config_name(check) == (None if case.error else "cfg")


@dataclass(frozen=True)
class CheckCase:
    name: str
    clusters: tuple[str, ...] | None  # None: the config is missing
    states: dict[str, bool | None]
    condition: tuple[str, str, str]
    error: str | None = None


CHECKS = [
    CheckCase(
        "config not found",
        None,
        {},
        (
            "False",
            "BadConfig",
            "Cannot load the AdmissionChecks parameters: "
            'MultiKueueConfig.kueue.x-k8s.io "testing-config" not found',
        ),
        error=config_not_found("testing-config"),
    ),
    CheckCase(
        "bad reference",
        None,
        {},
        (
            "False",
            "BadConfig",
            "Cannot load the AdmissionChecks parameters: missing parameters reference",
        ),
        error="missing parameters reference",
    ),
    CheckCase(
        "only missing",
        ("testing-cluster",),
        {},
        ("False", "NoUsableClusters", "Missing clusters: [testing-cluster]"),
    ),
    CheckCase(
        "only inactive",
        ("testing-cluster",),
        {"testing-cluster": False},
        ("False", "NoUsableClusters", "Inactive clusters: [testing-cluster]"),
    ),
    CheckCase(
        "missing and inactive, go list format",
        ("a", "b", "c"),
        {"b": False, "c": False},
        ("False", "NoUsableClusters", "Missing clusters: [a], Inactive clusters: [b c]"),
    ),
    CheckCase(
        "some active",
        ("w1", "w2", "w3"),
        {"w1": True, "w2": False},
        ("True", "SomeActiveClusters", "Missing clusters: [w3], Inactive clusters: [w2]"),
    ),
    CheckCase(
        "all active",
        ("w1", "w2"),
        {"w1": True, "w2": True},
        ("True", "Active", "The admission check is active"),
    ),
]


@pytest.mark.parametrize("case", CHECKS, ids=[c.name for c in CHECKS])
def test_admission_check_active(case: CheckCase) -> None:
    config = None if case.clusters is None else {"spec": {"clusters": list(case.clusters)}}
    assert admission_check_active(config, case.error, case.states) == case.condition
