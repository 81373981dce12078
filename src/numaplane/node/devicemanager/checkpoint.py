"""``kubelet_internal_checkpoint``: the device manager's checkpoint.

``{"Data":{"PodDeviceEntries":[…],"RegisteredDevices":{…}},"Checksum":N[,"BootID":"…"]}`` with
Go field names as keys. The checksum covers the ``Data`` value only (``BootID``, added later,
sits outside it so older files stay valid) and, unlike the CPU and memory checkpoints, 0 is not
accepted. ``DeviceIDs`` maps a NUMA node id (-1: no topology) to device ids; ``AllocResp`` is
the plugin's serialised ``ContainerAllocateResponse`` (base64 in JSON, decimal bytes in the
hash). Files of kubelet ≤ 1.19 (V1) keep ``DeviceIDs`` as a plain list; they are read with all
devices on NUMA node 0, as upstream did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from numaplane.node.checkpoint import (
    CheckpointDecodeError,
    CheckpointError,
    CorruptCheckpointError,
)
from numaplane.node.gocodec import (
    CHECKSUM,
    INT64,
    STRING,
    UINT8,
    GoField,
    GoType,
    go_checksum,
    map_of,
    slice_of,
    spew_sharp_v,
    struct,
)
from numaplane.node.gojson import GoJSONError, go_marshal, go_unmarshal

DEVICE_MANAGER_CHECKPOINT = "kubelet_internal_checkpoint"
"""The file name, in the kubelet's ``device-plugins`` directory."""

_STRINGS = slice_of(STRING)
_REGISTERED = map_of(STRING, _STRINGS)


def _entry_type(name: str, device_ids: GoType) -> GoType:
    return struct(
        name,
        GoField("PodUID", STRING),
        GoField("ContainerName", STRING),
        GoField("ResourceName", STRING),
        GoField("DeviceIDs", device_ids),
        GoField("AllocResp", slice_of(UINT8)),
    )


ENTRY_TYPE = _entry_type(
    "checkpoint.PodDevicesEntry", map_of(INT64, _STRINGS).named("checkpoint.DevicesPerNUMA")
)
DATA_TYPE = struct(
    "checkpoint.checkpointData",
    GoField("PodDeviceEntries", slice_of(ENTRY_TYPE)),
    GoField("RegisteredDevices", _REGISTERED),
)
"""``checkpoint.checkpointData``: the hashed part."""
FILE_TYPE = struct(
    "checkpoint.Data",
    GoField("Data", DATA_TYPE),
    GoField("Checksum", CHECKSUM),
    GoField("BootID", STRING, omitempty=True),
)
ENTRY_V1_TYPE = _entry_type("checkpoint.PodDevicesEntryV1", _STRINGS)
DATA_V1_TYPE = struct(
    "checkpoint.checkpointDataV1",
    GoField("PodDeviceEntries", slice_of(ENTRY_V1_TYPE)),
    GoField("RegisteredDevices", _REGISTERED),
)
FILE_V1_TYPE = struct(
    "checkpoint.DataV1", GoField("Data", DATA_V1_TYPE), GoField("Checksum", CHECKSUM)
)


def _normalise_v1(rendered: str) -> str:
    rendered = rendered.replace("checkpointDataV1", "checkpointData", 1)
    return rendered.replace("PodDevicesEntryV1", "PodDevicesEntry")


@dataclass(frozen=True)
class PodDevicesEntry:
    """Devices of one resource allocated to one container."""

    pod_uid: str
    container_name: str
    resource_name: str
    device_ids: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    alloc_resp: bytes = b""

    def go_value(self) -> dict[str, object]:
        """The Go struct value."""
        return {
            "PodUID": self.pod_uid,
            "ContainerName": self.container_name,
            "ResourceName": self.resource_name,
            "DeviceIDs": {node: list(ids) for node, ids in self.device_ids.items()},
            "AllocResp": self.alloc_resp,
        }


@dataclass(frozen=True)
class DeviceManagerCheckpoint:
    """A ``kubelet_internal_checkpoint``.

    ``pod_device_entries`` ``None`` is Go's nil slice (written ``null``), which the kubelet
    writes when nothing is allocated; it hashes differently from an empty list.
    """

    pod_device_entries: tuple[PodDevicesEntry, ...] | None
    registered_devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    checksum: int = 0
    boot_id: str = ""

    def data_value(self) -> dict[str, object]:
        """The Go ``checkpointData`` value."""
        entries = self.pod_device_entries
        return {
            "PodDeviceEntries": None if entries is None else [e.go_value() for e in entries],
            "RegisteredDevices": {r: list(ids) for r, ids in self.registered_devices.items()},
        }

    def hashed_payload(self) -> str:
        """The spew rendering of ``Data`` that the checksum hashes."""
        return spew_sharp_v(self.data_value(), DATA_TYPE)

    def compute_checksum(self) -> int:
        """The checksum the kubelet would store for this content."""
        return go_checksum(self.data_value(), DATA_TYPE)

    def to_bytes(self) -> bytes:
        """The file as the kubelet writes it (checksum recomputed)."""
        value = {
            "Data": self.data_value(),
            "Checksum": self.compute_checksum(),
            "BootID": self.boot_id,
        }
        return go_marshal(value, FILE_TYPE)

    @classmethod
    def from_bytes(
        cls, data: bytes, *, source: str, verify: bool = True
    ) -> DeviceManagerCheckpoint:
        """Decode a current-format file; verify its checksum unless told not."""
        value = _unmarshal(data, FILE_TYPE, source)
        actual = go_checksum(value["Data"], DATA_TYPE)
        checkpoint = cls(
            pod_device_entries=_entries(value["Data"]["PodDeviceEntries"], legacy=False),
            registered_devices=_registered(value["Data"]["RegisteredDevices"]),
            checksum=value["Checksum"],
            boot_id=value["BootID"],
        )
        if verify and checkpoint.checksum != actual:
            raise CorruptCheckpointError(actual, checkpoint.checksum, source=source)
        return checkpoint

    @classmethod
    def from_v1_bytes(
        cls, data: bytes, *, source: str, verify: bool = True
    ) -> DeviceManagerCheckpoint:
        """Decode a kubelet ≤ 1.19 file, every device placed on NUMA node 0."""
        value = _unmarshal(data, FILE_V1_TYPE, source)
        actual = go_checksum(value["Data"], DATA_V1_TYPE, rename=_normalise_v1)
        if verify and value["Checksum"] != actual:
            raise CorruptCheckpointError(actual, value["Checksum"], source=source)
        return cls(
            pod_device_entries=_entries(value["Data"]["PodDeviceEntries"], legacy=True),
            registered_devices=_registered(value["Data"]["RegisteredDevices"]),
            checksum=value["Checksum"],
        )


def v1_checksum(entries: list[dict[str, object]] | None, registered: dict[str, object]) -> int:
    """The checksum a kubelet ≤ 1.19 stored for V1 data (entries with list ``DeviceIDs``)."""
    value = {"PodDeviceEntries": entries, "RegisteredDevices": registered}
    return go_checksum(value, DATA_V1_TYPE, rename=_normalise_v1)


def _unmarshal(data: bytes, t: GoType, source: str) -> dict[str, Any]:
    # The manager decodes into a checkpoint made with an empty entry list and device map.
    into = {
        "Data": {"PodDeviceEntries": [], "RegisteredDevices": {}},
        "Checksum": 0,
        **({"BootID": ""} if t is FILE_TYPE else {}),
    }
    try:
        value = go_unmarshal(data, t, into)
    except GoJSONError as exc:
        raise CheckpointDecodeError(str(exc), source=source) from None
    assert isinstance(value, dict)
    return value


def _entries(raw: object, *, legacy: bool) -> tuple[PodDevicesEntry, ...] | None:
    if raw is None:
        return None
    assert isinstance(raw, list)
    entries = []
    for item in raw:
        ids = item["DeviceIDs"]
        per_numa = (
            {0: tuple(ids or ())} if legacy else {n: tuple(d or ()) for n, d in (ids or {}).items()}
        )
        entries.append(
            PodDevicesEntry(
                pod_uid=item["PodUID"],
                container_name=item["ContainerName"],
                resource_name=item["ResourceName"],
                device_ids=per_numa,
                alloc_resp=bytes(item["AllocResp"] or b""),
            )
        )
    return tuple(entries)


def _registered(raw: object) -> dict[str, tuple[str, ...]]:
    assert raw is None or isinstance(raw, dict)
    return {resource: tuple(ids or ()) for resource, ids in (raw or {}).items()}


def load_checkpoint(data: bytes, *, source: str) -> DeviceManagerCheckpoint:
    """Read a file of either format: current first, then V1; V1's error if both fail."""
    try:
        return DeviceManagerCheckpoint.from_bytes(data, source=source)
    except CheckpointError:
        return DeviceManagerCheckpoint.from_v1_bytes(data, source=source)
