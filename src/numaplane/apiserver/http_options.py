"""Request options as k8s.io/apiserver reads them from the query (and, for deletes, the body):
``CreateOptions``/``UpdateOptions``/``PatchOptions`` with upstream's validation (422
``CreateOptions.meta.k8s.io "" is invalid``), ``DeleteOptions``, the body limit, and the route
errors (404 for a path nothing serves, 405 for a method it does not offer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from numaplane.apiserver import errors
from numaplane.apiserver.errors import StatusError, bad_request, invalid
from numaplane.apiserver.http_codec import APPLY_PATCH, MAX_REQUEST_BODY_BYTES, decode_options

FIELD_VALIDATIONS = ("Ignore", "Strict", "Warn")
FIELD_MANAGER_MAX_LENGTH = 128
META_GROUP = "meta.k8s.io"

Query = Mapping[str, Sequence[str]]


def not_found_route() -> StatusError:
    """Upstream's answer for a path no route serves."""
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def method_not_allowed() -> StatusError:
    """Upstream's answer for a method a served path does not offer."""
    return StatusError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )


def first_value(query: Query, key: str) -> str:
    """The first value of ``key`` in the query, or ""."""
    values = query.get(key) or []
    return values[0] if values else ""


def parse_bool_param(query: Query, key: str) -> bool:
    """A boolean query parameter (absent: false), refused as Go's ParseBool refuses."""
    value = first_value(query, key)
    if not value:
        return False
    if value.lower() in ("true", "1", "t"):
        return True
    if value.lower() in ("false", "0", "f"):
        return False
    raise bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def parse_int_param(query: Query, key: str) -> int | None:
    """An integer query parameter (absent: None), refused as Go's ParseInt refuses."""
    value = first_value(query, key)
    if not value:
        return None
    try:
        return int(value)
    except ValueError as err:
        raise bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax') from err


@dataclass(frozen=True)
class WriteOptions:
    """``CreateOptions``/``UpdateOptions``/``PatchOptions`` read from the query."""

    dry_run: bool
    field_manager: str
    field_validation: str
    force: bool


def write_options(query: Query, kind: str, *, patch_type: str = "") -> WriteOptions:
    """Read and validate the options of a write as upstream's ``Validate*Options`` do
    (422 ``CreateOptions.meta.k8s.io "" is invalid: ...``)."""
    problems: list[errors.FieldError] = []
    dry_run_values = list(query.get("dryRun") or [])
    if any(v != "All" for v in dry_run_values):
        problems.append(errors.not_supported("dryRun", dry_run_values, ["All"]))
    manager = first_value(query, "fieldManager")
    if len(manager) > FIELD_MANAGER_MAX_LENGTH:
        problems.append(errors.too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    elif manager and not manager.isprintable():
        problems.append(
            errors.invalid_value("fieldManager", manager, "must only contain printable characters")
        )
    validation = first_value(query, "fieldValidation")
    if validation and validation not in FIELD_VALIDATIONS:
        problems.append(errors.not_supported("fieldValidation", validation, FIELD_VALIDATIONS))
    force = parse_bool_param(query, "force") if "force" in query else False
    if patch_type == APPLY_PATCH:
        if not manager:
            problems.append(errors.required("fieldManager", "is required for apply patch"))
    elif "force" in query and kind == "PatchOptions":
        problems.append(errors.forbidden_field("force", "may not be specified for non-apply patch"))
    if problems:
        raise invalid(META_GROUP, kind, "", problems)
    # Upstream's default directive is Warn when the client names none (kubectl sends Strict).
    return WriteOptions(bool(dry_run_values), manager, validation or "Warn", force)


def manager_or_user_agent(manager: str, user_agent: str) -> str:
    """The field manager of a create, update or non-apply patch: ``fieldManager`` when the client
    names one (already validated), else the prefix of its ``User-Agent``, as upstream's
    ``managerOrUserAgent`` (the official Python client's ``OpenAPI-Generator/31.0.0/python``
    manages as ``OpenAPI-Generator``)."""
    return manager or prefix_from_user_agent(user_agent)


def prefix_from_user_agent(user_agent: str) -> str:
    """Upstream's ``prefixFromUserAgent``: what precedes the first ``/``, without unprintable
    characters, cut (at a character) before it passes 128 UTF-8 bytes."""
    out: list[str] = []
    size = 0
    for char in user_agent.split("/", 1)[0]:
        if 0xDC80 <= ord(char) <= 0xDCFF:
            # A byte that is not UTF-8 (aiohttp keeps it as a surrogate escape): Go reads it as
            # U+FFFD, which is printable and takes three bytes.
            char = "\ufffd"
        if not char.isprintable():
            continue
        width = len(char.encode("utf-8"))
        if size + width > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(char)
        size += width
    return "".join(out)


def warning_header(text: str) -> str:
    """A ``Warning`` header value as upstream writes it: ``299 - "text"``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def delete_options(body: bytes, content_type: str, query: Query) -> dict[str, Any]:
    """``DeleteOptions`` from the body when there is one, else from the query (as upstream)."""
    options = decode_options(body, content_type, "DeleteOptions")
    if options:
        options.setdefault("kind", "DeleteOptions")
        options.setdefault("apiVersion", f"{META_GROUP}/v1")
        return options
    options = {"kind": "DeleteOptions", "apiVersion": f"{META_GROUP}/v1"}
    grace = parse_int_param(query, "gracePeriodSeconds")
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    policy = first_value(query, "propagationPolicy")
    if policy:
        options["propagationPolicy"] = policy
    if "orphanDependents" in query:
        options["orphanDependents"] = parse_bool_param(query, "orphanDependents")
    dry_run = list(query.get("dryRun") or [])
    if dry_run:
        options["dryRun"] = dry_run
    return options


def delete_dry_run(options: dict[str, Any]) -> bool:
    """Whether ``DeleteOptions`` ask for a dry run (``dryRun: [All]``, the only value)."""
    dry_run = options.get("dryRun") or []
    if not isinstance(dry_run, list) or any(v != "All" for v in dry_run):
        raise invalid(
            META_GROUP, "DeleteOptions", "", [errors.not_supported("dryRun", dry_run, ["All"])]
        )
    return bool(dry_run)


async def read_body(request: web.Request, limit: int = MAX_REQUEST_BODY_BYTES) -> bytes:
    """The request body, refused with upstream's 413 past ``limit`` bytes."""
    length = request.content_length
    if length is not None and length > limit:
        raise errors.entity_too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise errors.entity_too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)
