"""Request bodies: JSON objects only, capped, unknown fields refused; typed field readers."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from starlette.requests import Request

from talkie_tui.devserver.common import body_cap
from talkie_tui.devserver.common.json_input import JsonInputError, decode
from talkie_tui.devserver.cuckoo.errors import invalid


async def read_capped(request: Request, cap: int, code: str = "body_too_large") -> bytes:
    """The raw body, or 422 `code` as soon as it grows past `cap` bytes."""
    return await body_cap.read_capped(
        request, cap, lambda: invalid(code, f"The body is larger than {cap} bytes.")
    )


async def json_body(
    request: Request, allowed: Collection[str], *, cap: int, optional: bool = False
) -> dict[str, Any]:
    """The body as one JSON object with only `allowed` fields (`optional`: an empty body is {})."""
    raw = await read_capped(request, cap)
    if optional and not raw.strip():
        return {}
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise invalid("unsupported_media_type", "The body must be application/json.")
    try:
        payload = decode(raw)
    except JsonInputError as error:
        raise invalid("invalid_json", f"The body is not valid JSON: {error}") from None
    if not isinstance(payload, dict):
        raise invalid("invalid_json", "The body must be a single JSON object.")
    for name in payload:
        if name not in allowed:
            raise invalid("unknown_field", f"Unknown field `{name}`.", field=name)
    return payload


def opt_str(body: dict[str, Any], name: str, code: str) -> str | None:
    """A string field that may be absent or null."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(code, f"`{name}` must be a string.", field=name)
    return value


def req_str(body: dict[str, Any], name: str, code: str) -> str:
    """A string field that must be present."""
    value = opt_str(body, name, code)
    if value is None:
        raise invalid(code, f"`{name}` is required.", field=name)
    return value


def opt_bool(body: dict[str, Any], name: str) -> bool:
    """A boolean field, false when absent."""
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise invalid(f"invalid_{name}", f"`{name}` must be true or false.", field=name)
    return value


def one_line(value: str, name: str, code: str, low: int, high: int) -> str:
    """A trimmed single-line string of `low`..`high` characters."""
    value = value.strip()
    if "\n" in value or "\r" in value or not low <= len(value) <= high:
        raise invalid(code, f"`{name}` must be one line of {low} to {high} characters.", name)
    return value


PAGE_DEFAULT = 50
PAGE_MAX = 100
"""Messages in one page of a conversation's history: by default, and at most."""


def int_query(request: Request, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter in `low`..`high`, or 422 `invalid_<name>`."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise invalid(f"invalid_{name}", f"`{name}` must be an integer from {low} to {high}.")
    return value
