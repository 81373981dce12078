"""Go types shared by the ``gocodec`` and ``gojson`` tests."""

from __future__ import annotations

from numaplane.node.gocodec import (
    INT,
    INT64,
    STRING,
    UINT8,
    GoField,
    map_of,
    ptr_to,
    slice_of,
    struct,
)

POINT = struct("pkg.Point", GoField("X", INT, "x"), GoField("Tags", slice_of(STRING), "tags"))
HOLDER = struct(
    "pkg.Holder",
    GoField("Name", STRING, "name"),
    GoField("ByNode", map_of(INT64, slice_of(STRING)), "byNode", omitempty=True),
    GoField("Points", map_of(STRING, ptr_to(POINT)), "points"),
    GoField("Raw", slice_of(UINT8), "raw"),
)
