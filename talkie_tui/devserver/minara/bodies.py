"""The JSON bodies of the gateway's routes: read with a 1 MiB cap (413 past it, nothing more
read) and decoded safely (400 for anything that is not plain JSON)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from talkie_tui.devserver.common.body_cap import JSON_BODY_CAP, read_capped
from talkie_tui.devserver.common.json_input import JsonInputError, decode
from talkie_tui.devserver.minara.errors import ApiError, invalid_request


def _too_large() -> ApiError:
    return ApiError(413, "body_too_large", f"The body is over {JSON_BODY_CAP} bytes.")


async def read_body(request: Request) -> bytes:
    """The raw body of a JSON route, or 413 `body_too_large` once it passes the cap."""
    return await read_capped(request, JSON_BODY_CAP, _too_large)


def parse_json_body(raw: bytes) -> Any:
    """The JSON of a request body, or 400."""
    try:
        return decode(raw)
    except JsonInputError as error:
        raise invalid_request(f"The body is not valid JSON: {error}") from None


async def json_object(request: Request, *, empty_ok: bool = False) -> dict[str, Any]:
    """The body as one JSON object, or 400 (`empty_ok`: an empty body is {})."""
    raw = await read_body(request)
    payload = {} if empty_ok and not raw.strip() else parse_json_body(raw)
    if not isinstance(payload, dict):
        raise invalid_request("The body must be a JSON object.")
    return payload
