"""Raw HTTP for the checks of the Minara and Cuckoo suites: one request, its exact answer."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.conformance.wire import Answer, answer_of
from talkie_tui.protocol.net.failures import describe_transport_error
from talkie_tui.protocol.talkie.client import USER_AGENT

__all__ = ["error_object", "fetch"]

REQUEST_TIMEOUT = httpx.Timeout(20.0, connect=10.0)


async def fetch(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    origin: str,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str | int] | None = None,
    json_body: object = None,
    content: bytes | None = None,
) -> Answer:
    """Send one request (redirects are not followed) and return its raw answer; a transport
    error fails the check with words about `origin`."""
    sent = {"User-Agent": USER_AGENT, "Accept": "application/json", **(headers or {})}
    request = http.build_request(
        method,
        url,
        params=params,
        json=json_body,
        content=content,
        headers=sent,
        timeout=REQUEST_TIMEOUT,
    )
    try:
        return await answer_of(await http.send(request, stream=True, follow_redirects=False))
    except httpx.HTTPError as error:
        raise CheckFailed(describe_transport_error(error, origin).message) from error


def error_object(answer: Answer, status: int, what: str, rule: str) -> dict[str, object]:
    """The `error` object of an answer that must have this status and an error body with a
    string code and message; else the check fails, quoting `rule`."""
    if answer.status != status:
        raise CheckFailed(f"{what}: expected HTTP {status}, got {answer.describe()}")
    data = answer.json()
    error = data.get("error") if isinstance(data, dict) else None
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), str)
        or not isinstance(error.get("message"), str)
    ):
        raise CheckFailed(f"{what}: the HTTP {status} body is {show(answer.text)}; {rule}")
    return error
