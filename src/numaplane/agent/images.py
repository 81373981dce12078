"""The image table: what runs for a container that names an image but no command.

There is no container runtime here: containers run as host processes. A container with a
``command`` runs it (with its ``args``) as given, whatever its image. A container without one
runs what the table maps its image to, as a runtime runs the image's ENTRYPOINT and CMD:

- the entry's ``command`` (the image's ENTRYPOINT), then
- the container's ``args`` when it has some, else the entry's ``args`` (the image's CMD).

An image the table does not know cannot start: the container waits with the kubelet's reason
``ErrImagePull`` and a message naming the image and how to map it (``pull_error``).

The table file (``numaplane agent --image-table FILE``) is YAML::

    images:
      registry.example.com/team/worker: ["/opt/worker/bin/run"]      # command only
      busybox: {command: [], args: ["sh"]}                            # ENTRYPOINT + CMD
      python:3.12: {command: ["python3"]}

A key is an image reference; a tag or digest in the key makes the entry apply to that tag or
digest only, a key without one to every tag. ``docker.io/library/`` and ``docker.io/`` are
implied, as with a runtime (``busybox`` is ``docker.io/library/busybox``). The file's entries
come before the built-in ones (``DEFAULT_IMAGES``: the images of the Kueue examples and the
usual base images).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from numaplane.errors import InputError

#: The waiting reason of a container whose image the table does not know (the kubelet's).
ERR_IMAGE_PULL = "ErrImagePull"

# agnhost (registry.k8s.io/e2e-test-images/agnhost) is one binary whose first argument names
# what it does; the subcommands that make sense without a network of test pods are mapped.
_AGNHOST = r"""
case "$1" in
  pause) exec sleep infinity ;;
  entrypoint-tester) shift; echo "$0" "$@"; exit 0 ;;
  fake-gitserver|netexec|serve-hostname) exec sleep infinity ;;
  "") echo "agnhost: a subcommand is needed (numaplane maps: pause, entrypoint-tester)"; exit 1 ;;
  *) echo "agnhost: subcommand $1 is not mapped by numaplane's image table"; exit 1 ;;
esac
"""

# The perf-tests sleep image sleeps for a Go duration (its only argument): "30s", "1m30s",
# "500ms".
_GO_SLEEP = r"""
import re, sys, time
units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
arg = sys.argv[1] if len(sys.argv) > 1 else "0s"
parts = re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", arg)
if not parts or "".join(n + u for n, u in parts) != arg.lstrip("+"):
    sys.exit(f"sleep: invalid duration {arg!r}")
time.sleep(sum(float(n) * units[u] for n, u in parts))
"""


@dataclass(frozen=True)
class ImageEntry:
    """What an image runs: its ENTRYPOINT (``command``) and CMD (``args``)."""

    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()


#: The built-in entries (keys as in a table file).
DEFAULT_IMAGES: Mapping[str, ImageEntry] = {
    "registry.k8s.io/e2e-test-images/agnhost": ImageEntry(("/bin/sh", "-c", _AGNHOST, "agnhost")),
    "gcr.io/k8s-staging-perf-tests/sleep": ImageEntry((sys.executable, "-c", _GO_SLEEP)),
    "registry.k8s.io/pause": ImageEntry(("sleep", "infinity")),
    "busybox": ImageEntry((), ("sh",)),
    "alpine": ImageEntry((), ("/bin/sh",)),
    "ubuntu": ImageEntry((), ("/bin/bash",)),
    "debian": ImageEntry((), ("bash",)),
    "bash": ImageEntry(("bash",), ()),
    "python": ImageEntry((), ("python3",)),
}


def normalize(reference: str) -> str:
    """An image reference without the implied registry and library prefixes."""
    for prefix in ("docker.io/library/", "index.docker.io/library/", "docker.io/"):
        if reference.startswith(prefix):
            return reference[len(prefix) :]
    return reference


def repository(reference: str) -> str:
    """The reference without its tag and digest."""
    name = reference.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


class ImageTable:
    """Image references → what they run (the file's entries over the built-in ones)."""

    def __init__(self, entries: Mapping[str, ImageEntry] | None = None) -> None:
        merged = {normalize(k): v for k, v in DEFAULT_IMAGES.items()}
        merged.update({normalize(k): v for k, v in (entries or {}).items()})
        self._entries = merged

    def lookup(self, image: str) -> ImageEntry | None:
        """The entry of ``image``: the exact reference first, then its repository."""
        ref = normalize(image.strip())
        return self._entries.get(ref) or self._entries.get(repository(ref))

    def argv(
        self, image: str, command: tuple[str, ...], args: tuple[str, ...]
    ) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """The command and args a container runs (``None``: the image is unknown), as a
        runtime combines the container's with the image's ENTRYPOINT and CMD."""
        if command:
            return command, args
        entry = self.lookup(image)
        if entry is None:
            return None
        run = (entry.command, args if args else entry.args)
        return run if run[0] or run[1] else None


def pull_error(image: str) -> str:
    """The ``ErrImagePull`` message of an image the table does not know."""
    if not image:
        return (
            "the container has neither a command nor an image: give it a command, or an image "
            "mapped in numaplane agent's --image-table"
        )
    return (
        f'Failed to pull image "{image}": numaplane runs containers as host processes and its '
        f"image table has no entry for {repository(normalize(image))!r}: give the container a "
        f"command, or map the image in a file given to numaplane agent --image-table (images: "
        f'{{"{repository(normalize(image))}": {{"command": [...], "args": [...]}}}})'
    )


def load_image_table(path: Path) -> ImageTable:
    """The table of file ``path`` over the built-in entries; ``InputError`` naming the file and
    the entry when it is not a table."""
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as err:
        raise InputError(str(path), f"cannot read the image table: {err.strerror}") from err
    except yaml.YAMLError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(str(path), f"not YAML: {first}") from err
    if doc is None:
        return ImageTable()
    if not isinstance(doc, dict) or not isinstance(doc.get("images", {}), dict):
        raise InputError(str(path), 'expected {"images": {IMAGE: [COMMAND...] | {...}}}')
    entries: dict[str, ImageEntry] = {}
    for key, value in (doc.get("images") or {}).items():
        entries[str(key)] = _entry(path, str(key), value)
    return ImageTable(entries)


def _strings(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(str(path), "expected a list of strings", where)
    return tuple(value)


def _entry(path: Path, key: str, value: Any) -> ImageEntry:
    where = f"images.{key}"
    if isinstance(value, list):
        return ImageEntry(_strings(path, where, value))
    if isinstance(value, dict):
        unknown = set(value) - {"command", "args"}
        if unknown:
            raise InputError(str(path), f"unknown key(s) {sorted(unknown)}", where)
        command = _strings(path, f"{where}.command", value.get("command", []))
        args = _strings(path, f"{where}.args", value.get("args", []))
        if not command and not args:
            raise InputError(str(path), "the entry runs nothing: give command or args", where)
        return ImageEntry(command, args)
    raise InputError(str(path), "expected a list (the command) or {command, args}", where)
