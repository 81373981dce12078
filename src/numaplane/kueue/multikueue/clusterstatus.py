"""The ``Active`` conditions MultiKueue maintains, as upstream writes them: on a
MultiKueueCluster from its connection state (``clustersReconciler.updateStatus``), on a
MultiKueue AdmissionCheck from its MultiKueueConfig and the clusters' own ``Active``
(``ACReconciler.Reconcile``); the reconnect backoff (``retryAfter``); parameter references
(``refValidForGK``). Pure: times are the caller's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from numaplane.kueue import constants as c
from numaplane.kueue.api.conditions import find_condition, format_time

Obj = dict[str, Any]
Condition = tuple[str, str, str]  # (status, reason, message)

ACTIVE: Final = "Active"
REASON_ACTIVE: Final = "Active"
MESSAGE_CONNECTED: Final = "Connected"
REASON_CONNECTION_FAILED: Final = "ClientConnectionFailed"
REASON_BAD_CONFIG: Final = "BadConfig"
REASON_NO_USABLE_CLUSTERS: Final = "NoUsableClusters"
REASON_SOME_ACTIVE_CLUSTERS: Final = "SomeActiveClusters"
MESSAGE_CHECK_ACTIVE: Final = "The admission check is active"
LOAD_FAILED_PREFIX: Final = "load client config failed: "
CONFIG_KIND: Final = "MultiKueueConfig"
#: Upstream's reconnect backoff: ``5s * 2^(n-1)`` after n failed attempts, n capped at 7.
RETRY_INCREMENT_S: Final = 5.0
RETRY_MAX_STEPS: Final = 7


@dataclass(frozen=True)
class ConnectionState:
    """Where a MultiKueueCluster's connection stands: connected, or why not (the condition
    reason and the full message)."""

    active: bool
    reason: str
    message: str


CONNECTED: Final = ConnectionState(True, REASON_ACTIVE, MESSAGE_CONNECTED)


def retry_after(failed_attempts: int, base: float = RETRY_INCREMENT_S) -> float:
    """Seconds before the next connection attempt after ``failed_attempts`` failures."""
    if failed_attempts <= 0:
        return 0.0
    return base * float(2 ** (min(failed_attempts, RETRY_MAX_STEPS) - 1))


def with_attempts(message: str, attempts: int, next_attempt: float) -> str:
    """``message`` with upstream's ``; connection attempts: N, next connection attempt: T``
    suffix once some attempt failed (``next_attempt`` in seconds since the epoch)."""
    if attempts <= 0:
        return message
    return (
        f"{message}; connection attempts: {attempts}, "
        f"next connection attempt: {format_time(next_attempt)}"
    )


def load_failed(
    reason: str, error: str, attempts: int = 0, next_attempt: float = 0.0
) -> ConnectionState:
    """The state of a cluster whose kubeconfig could not be had or was refused."""
    return ConnectionState(
        False, reason, with_attempts(LOAD_FAILED_PREFIX + error, attempts, next_attempt)
    )


def connection_failed(error: str, attempts: int, next_attempt: float) -> ConnectionState:
    """The state of a cluster the manager could not connect to (or watch)."""
    return ConnectionState(
        False, REASON_CONNECTION_FAILED, with_attempts(error, attempts, next_attempt)
    )


def cluster_active_condition(state: ConnectionState) -> Condition:
    """The MultiKueueCluster ``Active`` condition's (status, reason, message)."""
    return ("True" if state.active else "False", state.reason, state.message)


def condition_differs(
    conditions: Sequence[Mapping[str, Any]] | None, kind: str, wanted: Condition
) -> bool:
    """Whether condition ``kind`` is missing or differs from ``wanted`` in status, reason or
    message (upstream's ``cmpConditionState``: only then is the status written)."""
    found = find_condition(conditions, kind)
    if found is None:
        return True
    return (found.get("status"), found.get("reason"), found.get("message")) != wanted


def is_cluster_active(cluster: Mapping[str, Any]) -> bool:
    """Whether a MultiKueueCluster object reports ``Active=True``."""
    found = find_condition((cluster.get("status") or {}).get("conditions"), ACTIVE)
    return found is not None and found.get("status") == "True"


# ----- the AdmissionCheck ---------------------------------------------------------------------


def parameters_error(check: Mapping[str, Any]) -> str | None:
    """Why an AdmissionCheck's ``spec.parameters`` cannot name a MultiKueueConfig, or None."""
    ref = (check.get("spec") or {}).get("parameters")
    if not ref:
        return "missing parameters reference"
    bad = "bad parameters reference"
    if not ref.get("name"):
        return f"empty name: {bad}"
    group = str(ref.get("apiGroup") or "")
    if group != c.GROUP:
        return f'wrong group "{group}", expecting "{c.GROUP}": {bad}'
    kind = str(ref.get("kind") or "")
    if kind != CONFIG_KIND:
        return f'wrong kind "{kind}", expecting "{CONFIG_KIND}": {bad}'
    return None


def config_name(check: Mapping[str, Any]) -> str | None:
    """The MultiKueueConfig an AdmissionCheck's parameters name, when they are valid."""
    if parameters_error(check) is not None:
        return None
    return str(check["spec"]["parameters"]["name"])


def config_not_found(name: str) -> str:
    """Upstream's (cached client) NotFound text for a missing MultiKueueConfig."""
    return f'{CONFIG_KIND}.{c.GROUP} "{name}" not found'


def config_clusters(config: Mapping[str, Any]) -> tuple[str, ...]:
    """A MultiKueueConfig's ``spec.clusters``, in order."""
    return tuple(str(n) for n in (config.get("spec") or {}).get("clusters") or ())


def _go_list(names: Sequence[str]) -> str:
    # Go's %v of a []string: "[a b]".
    return "[" + " ".join(names) + "]"


def admission_check_active(
    config: Mapping[str, Any] | None,
    config_error: str | None,
    clusters: Mapping[str, bool | None],
) -> Condition:
    """The MultiKueue AdmissionCheck ``Active`` condition. ``config_error`` (why the parameters
    or the MultiKueueConfig cannot be had; see :func:`parameters_error` and
    :func:`config_not_found`) wins; ``clusters`` maps each cluster name of ``config`` to True
    (its MultiKueueCluster is Active), False (inactive) or None (missing)."""
    if config_error is not None or config is None:
        error = config_error or "missing parameters reference"
        return ("False", REASON_BAD_CONFIG, f"Cannot load the AdmissionChecks parameters: {error}")
    names = config_clusters(config)
    missing = [n for n in names if clusters.get(n) is None]
    inactive = [n for n in names if clusters.get(n) is False]
    unusable = len(missing) + len(inactive)
    if unusable == 0:
        return ("True", REASON_ACTIVE, MESSAGE_CHECK_ACTIVE)
    parts = []
    if missing:
        parts.append(f"Missing clusters: {_go_list(missing)}")
    if inactive:
        parts.append(f"Inactive clusters: {_go_list(inactive)}")
    message = ", ".join(parts)
    if unusable < len(names):
        return ("True", REASON_SOME_ACTIVE_CLUSTERS, message)
    return ("False", REASON_NO_USABLE_CLUSTERS, message)
