"""The pods the agent should run: every Pod manifest in a directory (the kubelet's static pods),
and what any other ``PodSource`` gives (the API server's pods bound to the node:
``numaplane.agent.cluster.podsource``).

``ManifestDirectory.scan`` reads the directory and returns what it holds now: the pods by uid,
each with the file it came from, and the files that could not be read as pods with the reason.
A file is parsed again only when its size, modification time or inode changes, so polling a
large directory every second stays cheap. Hidden files (``.name``) and editor backups
(``name~``) are skipped, as the kubelet skips them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from numaplane.api.manifest import ManifestError, pods_from_text
from numaplane.api.pod import Pod
from numaplane.errors import InputError

#: Extensions read as manifests.
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class ManifestPod:
    """A pod a source gives: from one manifest file (``path``; ``digest`` is the SHA-256 (hex)
    of the file's bytes the pod was parsed from), or from elsewhere (``path`` ``None``).

    ``pinned``: the pod is the same pod for as long as its uid lives, whatever changes in its
    object (an API pod's labels, annotations and status change; its spec may not): once
    admitted it is never restarted for a change, as the kubelet treats API pods.
    """

    pod: Pod
    path: Path | None
    digest: str = ""
    pinned: bool = False


@dataclass(frozen=True)
class ManifestFault:
    """A manifest file that does not give pods: the file and why (one line)."""

    path: Path
    reason: str
    message: str


@dataclass(frozen=True)
class ScanResult:
    """The directory's content at one scan: pods by uid and the files that failed."""

    pods: Mapping[str, ManifestPod] = field(default_factory=dict)
    faults: tuple[ManifestFault, ...] = ()
    error: str | None = None
    """Set when the source itself cannot be read (the pods are then unknown)."""
    stopping: Mapping[str, int] = field(default_factory=dict)
    """Pods being deleted, by uid: the grace period in seconds their deletion gives them."""


class PodSource(Protocol):
    """Where the agent learns the pods it should run."""

    def scan(self) -> ScanResult:
        """The pods the source holds now, in the order they are to be admitted."""
        ...


@dataclass(frozen=True)
class _FileKey:
    size: int
    mtime_ns: int
    inode: int


class ManifestDirectory:
    """Polls one directory of Pod manifests."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: dict[Path, tuple[_FileKey, _Parsed | ManifestFault]] = {}

    def scan(self) -> ScanResult:
        """The pods and faults of the directory now."""
        try:
            entries = sorted(self.path.iterdir())
        except OSError as err:
            return ScanResult(error=f"{self.path}: cannot read the directory: {err.strerror}")
        pods: dict[str, ManifestPod] = {}
        faults: list[ManifestFault] = []
        seen: set[Path] = set()
        for path in entries:
            if not _is_manifest_name(path.name):
                continue
            try:
                st = path.stat()
            except OSError:
                continue  # removed between listing and stat
            if not path.is_file():
                continue
            seen.add(path)
            key = _FileKey(st.st_size, st.st_mtime_ns, st.st_ino)
            cached = self._cache.get(path)
            if cached is None or cached[0] != key:
                cached = (key, _read(path))
                self._cache[path] = cached
            content = cached[1]
            if isinstance(content, ManifestFault):
                faults.append(content)
                continue
            for pod in content.pods:
                other = pods.get(pod.uid)
                if other is not None:
                    faults.append(
                        ManifestFault(
                            path,
                            "DuplicatePod",
                            f"{path}: pod {pod.key} (uid {pod.uid}) is already defined in "
                            f"{other.path}",
                        )
                    )
                    continue
                pods[pod.uid] = ManifestPod(pod, path, content.digest)
        for gone in set(self._cache) - seen:
            del self._cache[gone]
        return ScanResult(pods, tuple(faults))


def _is_manifest_name(name: str) -> bool:
    return not name.startswith(".") and not name.endswith("~") and name.endswith(MANIFEST_SUFFIXES)


@dataclass(frozen=True)
class _Parsed:
    pods: tuple[Pod, ...]
    digest: str


def _read(path: Path) -> _Parsed | ManifestFault:
    try:
        # One read serves the parse and the digest, so the digest names the pods' bytes even
        # when the file is replaced meanwhile.
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return ManifestFault(
            path,
            "InvalidManifest",
            str(ManifestError(str(path), f"cannot read the file: {reason}")),
        )
    try:
        pods = pods_from_text(text, str(path))
    except ManifestError as err:
        return ManifestFault(path, "InvalidManifest", str(err))
    except InputError as err:
        return ManifestFault(path, "InvalidManifest", str(err))
    if not pods:
        return ManifestFault(path, "InvalidManifest", f"{path}: the file holds no Pod")
    return _Parsed(tuple(pods), hashlib.sha256(data).hexdigest())


def merge_scans(sources: Iterable[PodSource]) -> ScanResult:
    """Every source's pods, merged in the sources' order (a uid found twice: the first
    source's pod), with every source's faults, errors and pods being stopped."""
    pods: dict[str, ManifestPod] = {}
    faults: list[ManifestFault] = []
    errors: list[str] = []
    stopping: dict[str, int] = {}
    for source in sources:
        found = source.scan()
        if found.error is not None:
            errors.append(found.error)
        faults.extend(found.faults)
        stopping.update(found.stopping)
        for uid, mp in found.pods.items():
            pods.setdefault(uid, mp)
    return ScanResult(pods, tuple(faults), "; ".join(errors) or None, stopping)
