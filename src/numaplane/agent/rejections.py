"""The pods the node refused, remembered across restarts.

A rejected pod keeps the kubelet's reason and message and is not admitted again until its
manifest changes. So that a restarted agent does not retry every refused pod once, each
rejection is written to ``numaplane_rejections.json`` in the state directory (atomically,
through ``CheckpointStore``): the pod's uid, the SHA-256 of the manifest file it was read from,
the reason, the message and the admission's explanation. At the next start a rejection comes
back for a manifest with the same uid and digest; a changed or removed manifest drops it.

A refusal caused by the agent's own trouble (``retry``: its state could not be written) is
retried at the next scan and never written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numaplane.agent.podsource import ManifestPod
from numaplane.api.pod import Pod
from numaplane.errors import InputError
from numaplane.node.checkpoint import CheckpointError, CheckpointStore

_log = logging.getLogger(__name__)

#: The file rejections are remembered in, beside the checkpoints.
REJECTIONS_FILE = "numaplane_rejections.json"


@dataclass(frozen=True)
class Rejection:
    """A pod the node refused, as the kubelet reports it.

    ``admission`` is the admission's explanation (``Admission.to_json()``) when the node got
    as far as deciding; ``digest`` identifies the manifest file's content. ``retry`` is set
    when the refusal was the agent's own trouble, which the next scan retries.
    """

    pod: Pod
    manifest: Path | None
    reason: str
    message: str
    admission: Mapping[str, Any] | None = None
    retry: bool = False
    digest: str | None = None


@dataclass(frozen=True)
class RememberedRejection:
    """One entry of the rejections file: which manifest was refused, and why."""

    pod_uid: str
    digest: str
    reason: str
    message: str
    admission: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object for this entry."""
        return {
            "podUID": self.pod_uid,
            "manifestSHA256": self.digest,
            "reason": self.reason,
            "message": self.message,
            "admission": self.admission,
        }

    @classmethod
    def from_json(cls, item: Any) -> RememberedRejection:
        """Parse one entry; ``TypeError``/``KeyError`` when it is not one."""
        if not isinstance(item, dict):
            raise TypeError(f"expected an object, got {type(item).__name__}")
        uid, digest = item["podUID"], item["manifestSHA256"]
        reason, message = item["reason"], item["message"]
        if not all(isinstance(t, str) for t in (uid, digest, reason, message)):
            raise TypeError("podUID, manifestSHA256, reason and message must be strings")
        admission = item.get("admission")
        if admission is not None and not isinstance(admission, dict):
            raise TypeError("admission must be an object or null")
        return cls(uid, digest, reason, message, admission)


class RejectionRecords:
    """Load and save the rejections file of one state directory."""

    def __init__(self, store: CheckpointStore) -> None:
        self._store = store

    @property
    def path(self) -> str:
        """The file's path, for messages."""
        return str(self._store.path(REJECTIONS_FILE))

    def load(self) -> dict[str, RememberedRejection]:
        """The remembered rejections by pod uid (none when the file does not exist).

        Raises ``InputError`` (source: the file) when the file is not a rejections file.
        """
        data = self._store.read(REJECTIONS_FILE)
        if data is None:
            return {}
        try:
            doc = json.loads(data)
            entries = [RememberedRejection.from_json(item) for item in doc["rejections"]]
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            reason = f"missing key {err}" if isinstance(err, KeyError) else str(err)
            raise InputError(self.path, f"not a numaplane rejections file: {reason}") from err
        return {entry.pod_uid: entry for entry in entries}

    def save(self, entries: Mapping[str, RememberedRejection]) -> None:
        """Replace the file's content with ``entries`` (atomic)."""
        doc = {"rejections": [entries[uid].to_json() for uid in sorted(entries)]}
        self._store.write(REJECTIONS_FILE, json.dumps(doc, indent=1).encode())


class Rejections:
    """The agent's rejected pods: the current ones by uid, and those of the previous run
    that no scan has matched to a manifest yet. The agent's lock guards it."""

    def __init__(self, records: RejectionRecords, remembered: Mapping[str, RememberedRejection]):
        self._records = records
        self._remembered = dict(remembered)
        self._written = dict(remembered)
        self.current: dict[str, Rejection] = {}

    def __iter__(self) -> Iterator[Rejection]:
        return iter(list(self.current.values()))

    def refused(self) -> dict[str, Pod]:
        """The pods not to admit again while their manifest stays as it is."""
        return {uid: r.pod for uid, r in self.current.items() if not r.retry}

    def add(self, rejection: Rejection) -> None:
        """Record a refusal (and write the file if it is to be remembered)."""
        self.current[rejection.pod.uid] = rejection
        self._remembered.pop(rejection.pod.uid, None)
        self.save()

    def discard(self, pod_uid: str) -> None:
        """Forget the pod's refusal (it is being admitted again), in the file too."""
        self.current.pop(pod_uid, None)
        self._remembered.pop(pod_uid, None)
        self.save()

    def match(self, manifests: Mapping[str, ManifestPod], running: set[str]) -> None:
        """Follow one scan: drop the refusals whose manifest is gone, bring back the previous
        run's refusals of unchanged manifests, forget those of changed ones."""
        for uid in [u for u in self.current if u not in manifests]:
            del self.current[uid]
        for uid, entry in list(self._remembered.items()):
            found = manifests.get(uid)
            del self._remembered[uid]
            if found is None or uid in running or uid in self.current:
                continue
            if found.digest == entry.digest:
                self.current[uid] = Rejection(
                    found.pod,
                    found.path,
                    entry.reason,
                    entry.message,
                    entry.admission,
                    digest=entry.digest,
                )
        self.save()

    def save(self) -> None:
        """Write the rejections file when what it should hold changed; a failed write is
        logged (the refusals hold in memory; a restart retries the pods once)."""
        wanted = dict(self._remembered)
        for uid, rejection in self.current.items():
            if not rejection.retry and rejection.digest is not None:
                wanted[uid] = RememberedRejection(
                    uid, rejection.digest, rejection.reason, rejection.message, rejection.admission
                )
        if wanted == self._written:
            return
        try:
            self._records.save(wanted)
        except CheckpointError as err:
            _log.error("cannot write the rejections file: %s", err)
            return
        self._written = wanted
