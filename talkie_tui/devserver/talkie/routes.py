"""HTTP endpoints of the reference server."""

from __future__ import annotations

import html
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.devserver.common import clock, sse
from talkie_tui.devserver.common.frame_log import FrameLog
from talkie_tui.devserver.common.http import validated_body
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.talkie.accounts import DEV_USER, usage_items
from talkie_tui.devserver.talkie.answer_events import answer_events
from talkie_tui.devserver.talkie.assets import logo_png, sample_files
from talkie_tui.devserver.talkie.auth import USER_STATE_KEY
from talkie_tui.devserver.talkie.errors import invalid_request, not_found
from talkie_tui.devserver.talkie.manifest import LOGO_PATH, build_manifest
from talkie_tui.devserver.talkie.run_input import (
    RunRequest,
    UserInput,
    parse_json_body,
    parse_run_request,
    read_body,
    thread_title,
)
from talkie_tui.devserver.talkie.runs import INTERRUPTED, RETRYABLE_STATUSES
from talkie_tui.devserver.talkie.services import Services
from talkie_tui.devserver.talkie.storage import Storage

THREADS_LIMIT = 50


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def _user(request: Request) -> dict[str, str]:
    """The signed-in user: the one BearerAuth found for an OAuth token, else the dev user."""
    user: dict[str, str] | None = request.scope.get("state", {}).get(USER_STATE_KEY)
    return dict(user) if user is not None else dict(DEV_USER)


def _user_id(request: Request) -> str:
    # Each OAuth subject gets its own threads and usage; the dev token (or no auth) is one user.
    return _user(request)["id"]


def _origin(request: Request) -> str:
    host = request.headers.get("host") or request.url.netloc
    return f"{request.url.scheme}://{host}"


# --- public ----------------------------------------------------------------------------------


async def manifest(request: Request) -> JSONResponse:
    """GET /.well-known/talkie.json"""
    services = _services(request)
    body = build_manifest(services.config, services.server_id, _origin(request))
    return JSONResponse(
        body, headers={"Cache-Control": f"max-age={services.config.manifest_max_age}"}
    )


async def logo(request: Request) -> Response:
    """GET /talkie/logo.png"""
    max_age = _services(request).config.manifest_max_age
    return Response(
        logo_png(), media_type="image/png", headers={"Cache-Control": f"max-age={max_age}"}
    )


async def home(request: Request) -> PlainTextResponse:
    """GET / – a pointer for people who open the server in a browser."""
    return PlainTextResponse(
        "Talkie Demo CRM – a talkie/1 reference server.\n"
        "Manifest: /.well-known/talkie.json\n"
        "Connect with: talkie connect " + _origin(request) + "\n"
    )


async def crm_page(request: Request) -> Response:
    """GET /crm/… – the record pages the demo's links point to."""
    path = html.escape(request.url.path)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>Talkie Demo CRM</title></head>"
        f"<body><h1>Talkie Demo CRM</h1><p>This is the sample record page <code>{path}</code>."
        "</p><p>The demo has no real CRM behind it.</p></body></html>"
    )
    return Response(page, media_type="text/html")


# --- status, files ---------------------------------------------------------------------------


async def status(request: Request) -> JSONResponse:
    """GET status"""
    services = _services(request)
    voice = services.voice is not None
    usage = usage_items(services.storage, _user_id(request), voice=voice)
    return JSONResponse({"user": _user(request), "chat": True, "voice": voice, "usage": usage})


async def download(request: Request) -> Response:
    """GET /api/files/{name}"""
    name = request.path_params["name"]
    sample = sample_files().get(name)
    if sample is None:
        raise not_found(f"File {name}")
    return Response(
        sample.data,
        media_type=sample.mime,
        headers={"Content-Disposition": f'attachment; filename="{sample.name}"'},
    )


# --- runs ------------------------------------------------------------------------------------


def _event_stream(services: Services, log: FrameLog) -> StreamingResponse:
    return StreamingResponse(
        sse.follow(log, services.config.ping_interval, services.runs.stopping),
        media_type=sse.MEDIA_TYPE,
        headers=sse.HEADERS,
    )


async def run(request: Request) -> StreamingResponse:
    """POST run: start (or, for an already stored message, replay) a run and stream it."""
    services = _services(request)
    payload = parse_json_body(await read_body(request))
    run_request = parse_run_request(payload, services.config.max_message_chars)
    user_id = _user_id(request)
    storage = services.storage
    new = [item for item in run_request.messages if storage.get_message(item.id) is None]
    if new:
        return _event_stream(services, _start_for_new(services, user_id, run_request, new))
    # Every message is already stored: this is a retry of a send.
    stored = storage.get_message(run_request.messages[-1].id)
    assert stored is not None
    previous = storage.latest_run_for_message(stored["id"])
    if previous is not None and previous["status"] not in RETRYABLE_STATUSES:
        log = services.runs.log(previous["id"])
        assert log is not None
        return _event_stream(services, log)
    # The earlier answer failed, was cut, or never started: answer the stored message again,
    # the new answer taking the place of the one that failed or was cut.
    if previous is not None:
        storage.drop_answer(stored["id"])
    log = services.runs.start(
        run_id=_free_run_id(services, run_request.run_id),
        thread_id=stored["thread_id"],
        user_id=user_id,
        message_id=stored["id"],
        user_text=stored["content"],
    )
    return _event_stream(services, log)


def _start_for_new(
    services: Services, user_id: str, run_request: RunRequest, new: list[UserInput]
) -> FrameLog:
    storage = services.storage
    now = clock.iso(clock.now())
    if storage.get_thread(user_id, run_request.thread_id) is None:
        storage.create_thread(
            user_id, run_request.thread_id, thread_title(new[0].text), run_request.channel, now
        )
    for item in new:
        storage.add_message(
            run_request.thread_id, item.id, "user", item.text, now, channel=run_request.channel
        )
    return services.runs.start(
        run_id=_free_run_id(services, run_request.run_id),
        thread_id=run_request.thread_id,
        user_id=user_id,
        message_id=new[-1].id,
        user_text=new[-1].text,
    )


def _free_run_id(services: Services, wanted: str) -> str:
    # A reused runId gets a server id; RUN_STARTED tells the client which one it is.
    if services.storage.get_run(wanted) is None:
        return wanted
    return f"{wanted}-{clock.epoch_ms()}"


async def cancel_run(request: Request) -> JSONResponse:
    """POST cancelRun – always ok, also for ended or unknown runs."""
    _services(request).runs.cancel(request.path_params["run_id"])
    return JSONResponse({"ok": True})


# --- threads ---------------------------------------------------------------------------------


def _thread_json(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "title": row["title"],
        "channel": row["channel"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def _message_json(row: Row, storage: Storage) -> dict[str, Any]:
    """A stored message (§9), with two talkie extensions on an answer a run wrote (clients
    ignore fields they do not know): `events`, the run's events as they streamed (text deltas
    joined), so a reloaded thread shows each part where it was shown live; and `"incomplete":
    true` when the server's stop cut the run short."""
    message = {
        "id": row["id"],
        "role": row["role"],
        "content": row["content"],
        "createdAt": row["created_at"],
        "cards": row["cards"],
        "channel": row["channel"],
    }
    run = storage.run_of_answer(row["id"]) if row["role"] == "assistant" else None
    if run is not None:
        message["events"] = answer_events(run["frames"])
        if run["status"] == INTERRUPTED:
            message["incomplete"] = True
    return message


def _load_thread(request: Request) -> Row:
    thread_id = request.path_params["thread_id"]
    row = _services(request).storage.get_thread(_user_id(request), thread_id)
    if row is None:
        raise not_found(f"Thread {thread_id}")
    return row


async def list_threads(request: Request) -> JSONResponse:
    """GET threads – newest first, at most 50."""
    rows = _services(request).storage.list_threads(_user_id(request), THREADS_LIMIT)
    return JSONResponse({"threads": [_thread_json(row) for row in rows]})


async def get_thread(request: Request) -> JSONResponse:
    """GET thread – messages with cards, and the thread's actions."""
    services = _services(request)
    _load_thread(request)
    # Refreshing actions first may post results of finished undo windows into the thread.
    actions = services.actions.thread_actions(request.path_params["thread_id"])
    row = _load_thread(request)
    storage = services.storage
    messages = [_message_json(m, storage) for m in storage.list_messages(row["id"])]
    return JSONResponse({"thread": _thread_json(row), "messages": messages, "actions": actions})


async def delete_thread(request: Request) -> JSONResponse:
    """DELETE thread – pending actions are cancelled, live runs stopped."""
    services = _services(request)
    row = _load_thread(request)
    services.runs.cancel_thread(row["id"])
    services.actions.cancel_pending(row["id"])
    services.storage.delete_thread(_user_id(request), row["id"])
    return JSONResponse({"ok": True})


async def thread(request: Request) -> JSONResponse:
    """GET or DELETE thread (one route, so a wrong method gets a complete `Allow` header)."""
    if request.method == "DELETE":
        return await delete_thread(request)
    return await get_thread(request)


# --- actions ---------------------------------------------------------------------------------


class DecisionBody(BaseModel):
    """The body of POST decision."""

    model_config = ConfigDict(extra="ignore")

    decision: Literal["confirm", "cancel"]
    params_hash: str = Field(alias="paramsHash", min_length=1)
    method: Literal["button", "voice"]


async def get_action(request: Request) -> JSONResponse:
    """GET action – the authoritative current state."""
    services = _services(request)
    return JSONResponse(
        services.actions.current(_user_id(request), request.path_params["action_id"])
    )


async def decide(request: Request) -> JSONResponse:
    """POST decision – only ever called by the client on a human gesture."""
    services = _services(request)
    action_id = request.path_params["action_id"]
    services.actions.current(_user_id(request), action_id)  # 404 before complaining about the body
    payload = parse_json_body(await read_body(request))
    body = validated_body(DecisionBody, payload, what="decision", invalid=invalid_request)
    action, events = services.actions.decide(
        _user_id(request), action_id, body.decision, body.params_hash, body.method
    )
    return JSONResponse({"action": action, "events": events})


ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/.well-known/talkie.json", manifest, methods=["GET"]),
    Route(LOGO_PATH, logo, methods=["GET"]),
    Route("/crm/{path:path}", crm_page, methods=["GET"]),
    Route("/api/talkie/status", status, methods=["GET"]),
    Route("/api/talkie/run", run, methods=["POST"]),
    Route("/api/talkie/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
    Route("/api/talkie/threads", list_threads, methods=["GET"]),
    Route("/api/talkie/threads/{thread_id}", thread, methods=["GET", "DELETE"]),
    Route("/api/talkie/actions/{action_id}", get_action, methods=["GET"]),
    Route("/api/talkie/actions/{action_id}/decision", decide, methods=["POST"]),
    Route("/api/files/{name}", download, methods=["GET"]),
]
