"""Field paths as apimachinery's ``field.Path`` prints them: ``spec.items[0].name``."""

from __future__ import annotations


def child_path(path: str, key: str) -> str:
    """``spec`` + ``replicas`` -> ``spec.replicas`` (the root is ``""``)."""
    return f"{path}.{key}" if path else key


def index_path(path: str, index: int) -> str:
    """``spec.items`` + 0 -> ``spec.items[0]``."""
    return f"{path}[{index}]"


def key_path(path: str, key: str) -> str:
    """``spec.labels`` + ``a`` -> ``spec.labels[a]`` (a map entry, as ``field.Path.Key``)."""
    return f"{path}[{key}]"


def field_path(path: str, key: str, declared: bool) -> str:
    """A property (``declared``) by name, an additionalProperties entry by key: how upstream's
    CEL, list-type and embedded-resource validators name what they walk into."""
    return child_path(path, key) if declared else key_path(path, key)
