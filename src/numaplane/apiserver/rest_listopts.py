"""The options of a list or watch, as apimachinery reads them: ``ValidateListOptions`` and
``validateWatchOptions``, resourceVersions, opaque continue tokens (and the 410 of one whose
snapshot was compacted), and the label and field selectors turned into a predicate."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from numaplane.api.fieldselectors import parse_field_selector
from numaplane.api.labelparser import parse_label_selector
from numaplane.api.selectors import SelectorError
from numaplane.apiserver import errors
from numaplane.apiserver.resource import ResourceInfo
from numaplane.apiserver.rest_common import Object

CONTINUE_EXPIRED: Final = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)
#: The ``v`` of a continue token, as upstream encodes it.
CONTINUE_VERSION: Final = "meta.k8s.io/v1"
_URL_BASE64: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

Matcher = Callable[[Object], bool]


class ExpiredContinue(errors.StatusError):
    """410 Expired for a continue token whose snapshot was compacted; its ``metadata.continue``
    carries an inconsistent token that resumes at the latest state, as upstream's."""

    def __init__(self, token: str) -> None:
        super().__init__(410, "Expired", CONTINUE_EXPIRED)
        self.token = token

    def status(self) -> dict[str, Any]:
        """The ``Status`` with the fresh continue token in its list metadata."""
        body = super().status()
        body["metadata"] = {"continue": self.token}
        return body


def encode_continue(rv: int, start: str) -> str:
    """An opaque continue token: unpadded URL-safe base64 of ``{"v","rv","start"}``."""
    raw = json.dumps({"v": CONTINUE_VERSION, "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """``(rv, start key)`` of a continue token, or 400 ``continue key is not valid`` with Go's
    words for what does not decode."""
    bad = next((i for i, c in enumerate(token) if c not in _URL_BASE64), None)
    if bad is None and len(token) % 4 == 1:
        bad = len(token) - 1
    if bad is not None:
        raise errors.bad_request(
            f"continue key is not valid: illegal base64 data at input byte {bad}"
        )
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        raise errors.bad_request(
            "continue key is not valid: invalid character looking for beginning of value"
        ) from None
    if not isinstance(data, dict) or data.get("v") != CONTINUE_VERSION:
        raise errors.bad_request(
            "continue key is not valid: server does not recognize this encoded version"
        )
    rv = data.get("rv")
    start = data.get("start")
    if not isinstance(rv, int) or rv == 0:
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        )
    if not isinstance(start, str) or not start:
        raise errors.bad_request("continue key is not valid: encoded start key empty")
    return rv, start


def start_key(info: ResourceInfo, namespace: str, obj: Object) -> str:
    """The key after which the next page starts, relative to the listed prefix."""
    metadata = obj.get("metadata", {})
    if info.namespaced and not namespace:
        return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}\x00"
    return f"{metadata.get('name', '')}\x00"


def after_start(info: ResourceInfo, namespace: str, start: str) -> tuple[str, str]:
    """The ``(namespace, name)`` a start key points just past."""
    start = start.rstrip("\x00")
    if info.namespaced and not namespace:
        ns, _, name = start.partition("/")
        return ns, name
    return namespace, start


def parse_rv(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise errors.bad_request(f"invalid resource version: {text}") from None
    if value < 0:
        raise errors.bad_request(f"invalid resource version: {text}")
    return value


def _list_options_invalid(errs: list[errors.FieldError]) -> errors.StatusError:
    return errors.invalid("meta.k8s.io", "ListOptions", "", errs)


def validate_list_options(rv: str, match: str, continue_: str) -> None:
    """``ValidateListOptions`` of apimachinery for a list: every broken rule, in its order."""
    errs: list[errors.FieldError] = []
    if match:
        if not rv:
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if continue_:
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in ("Exact", "NotOlderThan"):
            errs.append(
                errors.not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""])
            )
        if match == "Exact" and rv == "0":
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if errs:
        raise _list_options_invalid(errs)


def validate_watch_options(match: str, send_initial_events: bool | None) -> None:
    """``validateWatchOptions`` of apimachinery (the WatchList feature is on)."""
    errs: list[errors.FieldError] = []
    if send_initial_events is not None and match != "NotOlderThan":
        errs.append(
            errors.forbidden_field(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if match:
        if send_initial_events is None:
            errs.append(
                errors.forbidden_field(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != "NotOlderThan":
            errs.append(errors.not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
    if errs:
        raise _list_options_invalid(errs)


def build_matcher(info: ResourceInfo, label_selector: str, field_selector: str) -> Matcher | None:
    """A predicate for the selectors (None when both are empty); bad selectors and unknown
    field labels are refused with 400 as upstream's list and watch handlers do."""
    if not label_selector and not field_selector:
        return None
    try:
        labels = parse_label_selector(label_selector) if label_selector else None
        fields = parse_field_selector(field_selector) if field_selector else None
    except SelectorError as error:
        raise errors.bad_request(str(error)) from None
    if fields is not None:
        known = _field_labels(info)
        for requirement in fields.requirements:
            if requirement.field not in known:
                raise errors.bad_request(f"field label not supported: {requirement.field}")

    def matches(obj: Object) -> bool:
        if labels is not None:
            obj_labels: Mapping[str, str] = obj.get("metadata", {}).get("labels") or {}
            if not labels.matches(obj_labels):
                return False
        return fields is None or fields.matches(info.field_set(obj))

    return matches


def _field_labels(info: ResourceInfo) -> set[str]:
    """The field labels ``info`` supports, read from its field set of a bare object."""
    skeleton: Object = {"metadata": {"name": "", "namespace": ""}, "spec": {}, "status": {}}
    try:
        return set(info.field_set(skeleton)) | {"metadata.name", "metadata.namespace"}
    except (KeyError, TypeError, AttributeError):
        return {"metadata.name", "metadata.namespace"}
