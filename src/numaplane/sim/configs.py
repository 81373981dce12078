"""Kubelet configurations to compare: trace entries, ``--compare`` values and shorthands.

A configuration is given one of three ways:

- a **shorthand** on top of a base configuration: ``POLICY[/SCOPE][+OPTION[=VALUE]]...`` where
  POLICY is a Topology Manager policy (``none``, ``best-effort``, ``restricted``,
  ``single-numa-node``), SCOPE ``container`` (default) or ``pod``, and each OPTION a Topology
  Manager policy option (``prefer-most-allocated-numa-node``, ``prefer-closest-numa-nodes``,
  ``max-allowable-numa-nodes=8``) or, prefixed ``cpu:``, a CPU Manager policy option
  (``cpu:full-pcpus-only``). VALUE defaults to ``true``. Example:
  ``single-numa-node/pod+prefer-most-allocated-numa-node+cpu:full-pcpus-only``;
- an inline KubeletConfiguration mapping (trace ``configs[].config``);
- a path to a KubeletConfiguration file (trace ``configs[].path``, or ``--compare FILE``).

The base (``BASE_CONFIG``, or the trace's ``baseConfig``) is a static CPU Manager reserving one
CPU, a Static Memory Manager reserving 1124Mi on NUMA node 0, and the alpha/beta option feature
gates on, so every option can be named.
"""

from __future__ import annotations

import copy
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from numaplane.api.kubeletconfig import (
    KubeletConfiguration,
    kubelet_config_from_dict,
    load_kubelet_config,
)
from numaplane.errors import InputError
from numaplane.sim.limits import MAX_CONFIG_BYTES

__all__ = [
    "BASE_CONFIG",
    "FieldError",
    "NamedConfig",
    "check_config_file",
    "config_entry",
    "parse_shorthand",
    "resolve_compare",
]

TOPOLOGY_POLICIES: Final = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES: Final = ("container", "pod")

BASE_CONFIG: Final[Mapping[str, Any]] = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "cpuManagerPolicy": "static",
    "kubeReserved": {"cpu": "500m", "memory": "512Mi"},
    "systemReserved": {"cpu": "500m", "memory": "512Mi"},
    "evictionHard": {"memory.available": "100Mi"},
    "mergeDefaultEvictionSettings": True,
    "memoryManagerPolicy": "Static",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
    "topologyManagerPolicy": "none",
    "topologyManagerScope": "container",
    "featureGates": {
        "TopologyManagerPolicyAlphaOptions": True,
        "TopologyManagerPolicyBetaOptions": True,
        "CPUManagerPolicyAlphaOptions": True,
        "CPUManagerPolicyBetaOptions": True,
    },
}


class FieldError(Exception):
    """A problem at ``where`` (a field path relative to the element being read); the trace
    reader prefixes the outer path and turns it into a ``TraceError``."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(reason)
        self.where = where
        self.reason = reason


_Fail = FieldError


@dataclass(frozen=True)
class NamedConfig:
    """A kubelet configuration with the label results carry (shorthand, file or trace name).

    ``origin`` says where it was given (``--compare``, ``trace.yaml: configs[2]``), for errors
    found only when a node is built from it.
    """

    name: str
    config: KubeletConfiguration
    origin: str = field(default="", compare=False)


def parse_shorthand(text: str, base: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """The KubeletConfiguration mapping a shorthand stands for (see the module doc).

    Raises ``InputError`` (source ``--compare``) for an unknown policy, scope or empty option.
    """
    head, *options = text.split("+")
    policy, _, scope = head.partition("/")
    if policy not in TOPOLOGY_POLICIES:
        raise InputError(
            "--compare",
            f"{text!r}: unknown policy {policy!r} (expected a trace config name, a "
            f"KubeletConfiguration file or {'|'.join(TOPOLOGY_POLICIES)}[/SCOPE][+OPTION...])",
        )
    scope = scope or "container"
    if scope not in SCOPES:
        raise InputError("--compare", f"{text!r}: unknown scope {scope!r} (container or pod)")
    doc = copy.deepcopy(dict(base if base is not None else BASE_CONFIG))
    doc["topologyManagerPolicy"] = policy
    doc["topologyManagerScope"] = scope
    tm_options: dict[str, str] = dict(doc.get("topologyManagerPolicyOptions") or {})
    cpu_options: dict[str, str] = dict(doc.get("cpuManagerPolicyOptions") or {})
    for option in options:
        name, _, value = option.partition("=")
        if not name:
            raise InputError("--compare", f"{text!r}: empty option after '+'")
        if name.startswith("cpu:"):
            cpu_options[name.removeprefix("cpu:")] = value or "true"
        else:
            tm_options[name] = value or "true"
    if tm_options:
        doc["topologyManagerPolicyOptions"] = tm_options
    if cpu_options:
        doc["cpuManagerPolicyOptions"] = cpu_options
    return doc


def _build(doc: Mapping[str, Any], source: str) -> KubeletConfiguration:
    return kubelet_config_from_dict(doc, source)


def check_config_file(path: Path) -> None:
    """Refuse a configuration path that is not a regular file or is over the size limit, so
    ``path: /dev/zero`` is one error line, not a read that never ends."""
    try:
        info = path.stat()
    except OSError as err:
        raise InputError(str(path), f"cannot read the file: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(str(path), "not a regular file (a KubeletConfiguration file expected)")
    if info.st_size > MAX_CONFIG_BYTES:
        raise InputError(
            str(path), f"the file is over the simulator's limit of {MAX_CONFIG_BYTES >> 20} MiB"
        )


def config_entry(raw: object, base: Mapping[str, Any] | None, base_dir: Path | None) -> NamedConfig:
    """One trace ``configs[]`` entry: a shorthand string or ``{name, config | path}``.

    Raises ``FieldError`` with the field inside the entry.
    """
    if isinstance(raw, str):
        try:
            return NamedConfig(raw, _build(parse_shorthand(raw, base), raw))
        except InputError as err:
            raise _Fail(err.field or "", err.reason) from None
    if not isinstance(raw, Mapping):
        raise _Fail("", "expected a shorthand string or {name, config | path}")
    unknown = sorted(str(k) for k in raw if k not in ("name", "config", "path", "shorthand"))
    if unknown:
        raise _Fail(unknown[0], "unknown key (expected name, config, path, shorthand)")
    given = [k for k in ("config", "path", "shorthand") if k in raw]
    if len(given) != 1:
        raise _Fail("", "give exactly one of config, path, shorthand")
    kind = given[0]
    value = raw[kind]
    name = raw.get("name", value if isinstance(value, str) else None)
    if not isinstance(name, str) or not name:
        raise _Fail("name", "expected a non-empty string")
    try:
        if kind == "config":
            if not isinstance(value, Mapping):
                raise _Fail("config", "expected a KubeletConfiguration mapping")
            return NamedConfig(name, _build(value, name))
        if not isinstance(value, str):
            raise _Fail(kind, "expected a string")
        if kind == "shorthand":
            return NamedConfig(name, _build(parse_shorthand(value, base), value))
        path = Path(value)
        if base_dir is not None and not path.is_absolute() and (base_dir / path).exists():
            path = base_dir / path
        check_config_file(path)
        return NamedConfig(name, load_kubelet_config(path))
    except InputError as err:
        where = kind if err.field is None else f"{kind}.{err.field}"
        raise _Fail(where, err.reason) from None


def resolve_compare(
    values: Sequence[str],
    trace_configs: Sequence[NamedConfig],
    base: Mapping[str, Any] | None = None,
) -> list[NamedConfig]:
    """The configurations ``--compare`` names, in order; the trace's own when none is given.

    Each value is a trace config name, an existing KubeletConfiguration file, or a shorthand.
    """
    if not values:
        if not trace_configs:
            raise InputError(
                "--compare", "the trace names no configs; give --compare (e.g. single-numa-node)"
            )
        return list(trace_configs)
    by_name = {c.name: c for c in trace_configs}
    out: list[NamedConfig] = []
    for value in values:
        if value in by_name:
            out.append(by_name[value])
        elif Path(value).is_file():
            check_config_file(Path(value))
            out.append(NamedConfig(value, load_kubelet_config(value), "--compare"))
        else:
            built = _build(parse_shorthand(value, base), value)
            out.append(NamedConfig(value, built, "--compare"))
    names = [c.name for c in out]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise InputError("--compare", f"{name!r} is given twice")
    return out
