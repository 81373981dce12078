"""Strategic merge patch against the applications transcribed from upstream's unit tests
(``tests/data/strategicpatch/upstream_cases.yaml``), on upstream's test type ``MergeItem``."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from numaplane.apiserver.patch_go import StrategicPatchError
from numaplane.apiserver.patch_strategic import strategic_merge_patch
from numaplane.apiserver.patchmeta import Schema

CASES_FILE = Path(__file__).parent.parent / "data" / "strategicpatch" / "upstream_cases.yaml"


def _merge_item_schema() -> Schema:
    # MergeItem is recursive (its merging lists hold MergeItems): the fields dict is filled
    # after the schemas that point back to it exist.
    fields: dict[str, Schema] = {}
    item = Schema(fields=fields)
    retain_fields: dict[str, Schema] = {}
    fields.update(
        mergingList=Schema(elements=item, patch_strategy="merge", patch_merge_key="name"),
        nonMergingList=Schema(elements=item),
        mergingIntList=Schema(patch_strategy="merge"),
        nonMergingIntList=Schema(),
        mergeItemPtr=Schema(fields=fields, patch_strategy="merge", patch_merge_key="name"),
        simpleMap=Schema(elements=Schema()),
        replacingItem=Schema(patch_strategy="replace"),
        retainKeysMap=Schema(fields=retain_fields, patch_strategy="retainKeys"),
        retainKeysMergingList=Schema(
            elements=item, patch_strategy="merge,retainKeys", patch_merge_key="name"
        ),
    )
    retain_fields.update(
        simpleMap=Schema(elements=Schema()),
        mergingIntList=Schema(patch_strategy="merge"),
        mergingList=Schema(elements=item, patch_strategy="merge", patch_merge_key="name"),
        nonMergingList=Schema(elements=item),
    )
    return item


MERGE_ITEM = _merge_item_schema()


@dataclass(frozen=True)
class UpstreamCase:
    name: str
    original: dict[str, Any]
    patch: dict[str, Any]
    result: dict[str, Any] | None
    error: str


def _load() -> list[UpstreamCase]:
    raw = yaml.safe_load(CASES_FILE.read_text())
    return [
        UpstreamCase(c["name"], c["original"], c["patch"], c.get("result"), c.get("error", ""))
        for c in raw
    ]


CASES = _load()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_upstream_strategic_merge_patch_case(case: UpstreamCase) -> None:
    patch = copy.deepcopy(case.patch)
    if case.error:
        with pytest.raises(StrategicPatchError) as caught:
            strategic_merge_patch(case.original, patch, schema=MERGE_ITEM)
        assert case.error in caught.value.message
        return
    assert strategic_merge_patch(case.original, patch, schema=MERGE_ITEM) == case.result


def test_the_transcription_is_all_there() -> None:
    assert len(CASES) >= 75  # a broken loader must not pass by loading nothing
    assert len({c.name for c in CASES}) == len(CASES)
