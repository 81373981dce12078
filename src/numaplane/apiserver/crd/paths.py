"""Field paths as apimachinery's ``field.Path`` prints them: ``spec.items[0].name``."""

from __future__ import annotations


def child_path(path: str, key: str) -> str:
    """``spec`` + ``replicas`` -> ``spec.replicas`` (the root is ``""``)."""
    return f"{path}.{key}" if path else key


def index_path(path: str, index: int) -> str:
    """``spec.items`` + 0 -> ``spec.items[0]``."""
    return f"{path}[{index}]"
