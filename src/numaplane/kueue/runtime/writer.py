"""Making the engine's writes through the API, as upstream's controllers make theirs: a status
write is a PUT of the status subresource carrying the resourceVersion the decision was made
on, so a decision on a stale object is refused (409) instead of overwriting what someone else
wrote; on a conflict the object is read again and fed to the engine, which decides anew.
Events are recorded once their write succeeded."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from numaplane.kube.client import KubeClient
from numaplane.kube.errors import ApiError, KubeError
from numaplane.kube.events import EventRecorder
from numaplane.kueue.engine import (
    CREATE,
    DELETE,
    KINDS,
    STATUS,
    UPDATE,
    Event,
    Touched,
    Write,
    split_key,
)

log = logging.getLogger(__name__)

#: Tries of a write that has a redo (upstream's RetryOnConflict tries 5 times).
REDO_ATTEMPTS = 5


class Writer:
    """Sends :class:`Write` values and records :class:`Event` values."""

    def __init__(
        self,
        client: KubeClient,
        recorders: Mapping[str, EventRecorder],
        *,
        refreshed: Callable[[str, dict[str, object]], Touched],
        gone: Callable[[str, dict[str, object]], Touched],
        failed: Callable[[Write], Touched],
        touched: Callable[[Touched], None],
    ) -> None:
        self.client = client
        self.recorders = recorders
        self._refreshed = refreshed
        self._gone = gone
        self._failed = failed
        self._touched = touched
        #: Counters: writes made, refused on a conflict, failed otherwise.
        self.written = 0
        self.conflicts = 0
        self.errors = 0

    def record(self, source: str, events: tuple[Event, ...] | list[Event]) -> None:
        """Record ``events`` with the recorder of component ``source``."""
        recorder = self.recorders.get(source) or next(iter(self.recorders.values()))
        for event in events:
            recorder.event(event.obj, event.type, event.reason, event.message)

    async def write(self, write: Write, source: str, *, decode: bool = False) -> str | None:
        """Make ``write``; None when it was not made, else the resourceVersion it left (only
        with ``decode``; "" otherwise). A conflict redoes the write's decision on the object
        read again when it has a ``redo`` (a few times), else refreshes the object in the
        engine (so its reconciler runs again on the fresh one); any failure of a write
        carrying a reservation forgets that reservation."""
        attempt = 1
        while True:
            try:
                return await self._write_once(write, source, decode)
            except ApiError as err:
                redone = await self._redo(write, err) if attempt < REDO_ATTEMPTS else None
                if redone is None:
                    await self._refused(write, err)
                    return None
                write = redone
                attempt += 1

    async def _redo(self, write: Write, err: ApiError) -> Write | None:
        """On a conflict, the write's decision applied to the object read again (None: it
        has no redo, or the decision no longer applies)."""
        if not err.is_conflict or write.redo is None:
            return None
        self.conflicts += 1
        info = KINDS[write.kind]
        namespace, name = split_key(write.key)
        try:
            fresh = await self.client.get(info.api_version, info.resource, name, namespace or None)
        except ApiError:
            return None
        # The engine sees the fresh version first (it keeps an assumed reservation counted).
        self._touched(self._refreshed(write.kind, fresh))
        obj = write.redo(fresh)
        return None if obj is None else write.redone(obj)

    async def _write_once(self, write: Write, source: str, decode: bool) -> str | None:
        info = KINDS[write.kind]
        namespace, name = split_key(write.key)
        ns = namespace or None
        try:
            result: dict[str, object] = {}
            if write.verb == STATUS:
                result = await self.client.update(
                    info.api_version,
                    info.resource,
                    write.obj,
                    ns,
                    subresource="status",
                    decode=decode,
                )
            elif write.verb == UPDATE and write.patch is not None:
                result = await self.client.patch(
                    info.api_version, info.resource, name, dict(write.patch), ns, decode=decode
                )
            elif write.verb == UPDATE:
                result = await self.client.update(
                    info.api_version, info.resource, write.obj, ns, decode=decode
                )
            elif write.verb == CREATE:
                result = await self.client.create(
                    info.api_version, info.resource, write.obj, ns, decode=decode
                )
            elif write.verb == DELETE:
                await self.client.delete(
                    info.api_version, info.resource, name, ns, propagation_policy="Background"
                )
            else:
                raise ValueError(f"unknown write verb {write.verb!r}")
        except KubeError as err:
            if isinstance(err, ApiError):
                raise
            self.errors += 1
            log.info("%s %s %s: %s", write.verb, write.kind, write.key, err)
            if write.assumed:
                self._touched(self._failed(write))
            raise
        self.written += 1
        self.record(source, write.events)
        meta = result.get("metadata") if isinstance(result, dict) else None
        return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""

    async def _refused(self, write: Write, err: ApiError) -> None:
        if write.assumed:
            self._touched(self._failed(write))
        if err.is_conflict and write.verb in (STATUS, UPDATE):
            self.conflicts += 1
            log.debug("%s %s: conflict; reading it again", write.kind, write.key)
            await self.refresh(write.kind, write.key)
            return
        if err.is_not_found and write.verb != CREATE:
            # Deleted meanwhile: the informer's delete event follows, nothing to retry.
            log.debug("%s %s: gone", write.kind, write.key)
            return
        if err.is_conflict and write.verb == CREATE:
            # Created already (by us, before a restart): the informer brings it.
            log.debug("%s %s: exists", write.kind, write.key)
            return
        self.errors += 1
        log.warning("%s %s %s refused: %s", write.verb, write.kind, write.key, err)

    async def refresh(self, kind: str, key: str) -> None:
        """Read ``kind`` ``key`` again and hand it to the engine (or its absence)."""
        info = KINDS[kind]
        namespace, name = split_key(key)
        try:
            fresh = await self.client.get(info.api_version, info.resource, name, namespace or None)
        except ApiError as err:
            if err.is_not_found:
                self._touched(self._gone(kind, {"metadata": _meta(namespace, name)}))
            return
        self._touched(self._refreshed(kind, fresh))


def _meta(namespace: str, name: str) -> dict[str, object]:
    return {"namespace": namespace, "name": name} if namespace else {"name": name}
