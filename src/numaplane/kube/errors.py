"""What the Kubernetes client raises: the server's ``Status`` as :class:`ApiError`, an unusable
kubeconfig as :class:`KubeconfigError`, an unreachable server as :class:`KubeConnectionError`."""

from __future__ import annotations

from typing import Any

from numaplane.errors import InputError, NumaplaneError


class KubeError(NumaplaneError):
    """Base class of the client's errors."""


class ApiError(KubeError):
    """The API server refused a request; ``status`` is its ``metav1.Status`` body (or one built
    from the HTTP status when the body was no Status)."""

    def __init__(self, status: dict[str, Any]) -> None:
        self.status = status
        super().__init__(self.message)

    @property
    def code(self) -> int:
        """The HTTP status code (``404``, ``409``, ``410``, ...)."""
        return int(self.status.get("code") or 0)

    @property
    def reason(self) -> str:
        """The machine-readable reason (``NotFound``, ``Conflict``, ``Expired``, ...)."""
        return str(self.status.get("reason") or "")

    @property
    def message(self) -> str:
        """The server's message, as kubectl prints it."""
        return str(self.status.get("message") or self.reason or f"HTTP {self.code}")

    @property
    def is_not_found(self) -> bool:
        """404: the object does not exist."""
        return self.code == 404

    @property
    def is_conflict(self) -> bool:
        """409 Conflict (stale resourceVersion) or AlreadyExists."""
        return self.code == 409

    @property
    def is_gone(self) -> bool:
        """410: the resourceVersion asked for was compacted; list again."""
        return self.code == 410


class KubeconfigError(InputError, KubeError):
    """A kubeconfig that cannot be used: ``PATH: FIELD: reason`` on one line."""


class KubeConnectionError(KubeError):
    """The API server could not be reached or broke the connection: one line naming the URL."""
