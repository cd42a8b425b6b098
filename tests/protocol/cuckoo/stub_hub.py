"""A small Cuckoo hub for the client's tests: Starlette routes of the client API, as
`notes/cuckoo.md` §1 describes them, written for these tests (no hub code).

It is strict where the hub is: JSON bodies only, unknown fields refused (`422 unknown_field`
with `field`), the bearer checked on every `/v1/client` route, idempotent sends (201, then
200 with the same message for the same key), and the error envelope with a request id. A few
conversation ids make it misbehave on purpose: `cnv_moved` redirects to `MovedTo`, `cnv_boom`
fails with 500, `cnv_proxy` answers a proxy's HTML page, `cnv_flaky` fails a send once.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TOKEN = "ses_tok_test0123456789"
CODE = "123456"
USER = {
    "id": "usr_01",
    "display_name": "Priya\x1b]0;pwned\x07",
    "locale": "en",
    "avatar_media_id": None,
    "created_at": "2026-07-01T10:00:00Z",
    "updated_at": "2026-07-01T10:00:00Z",
    "favourite_colour": "green",
}
AGENT = {"kind": "agent", "id": "agt_01", "display_name": "Helper", "status": "connected"}


def error(status: int, code: str, message: str, *, field: str | None = None, **headers: str):
    body: dict[str, Any] = {"code": code, "message": message, "request_id": f"req_{status}"}
    if field is not None:
        body["field"] = field
    return JSONResponse({"error": body}, status, headers=headers)


def agent_message(message_id: str, text: str, **body: Any) -> dict[str, Any]:
    return {
        "id": message_id,
        "conversation_id": "cnv_01",
        "sender": {"kind": "agent", "id": "agt_01"},
        "body": {"text": text, **body},
        "reply_to": None,
        "status": "complete",
        "truncated": False,
        "stopped": False,
        "schedule": None,
        "delivery_status": None,
        "created_at": "2026-07-01T10:00:00Z",
    }


class StubHub:
    """The hub's state and routes (see the module docstring)."""

    def __init__(self) -> None:
        self.moved_to = ""  # where cnv_moved redirects
        self.sent: dict[str, dict[str, Any]] = {}  # idempotency key -> message
        self.key_conversation: dict[str, str] = {}
        self.flaky_failures = 1
        self.uploads: list[tuple[dict[str, str], bytes]] = []
        self.media: dict[str, bytes] = {"med_photo": b"\x89PNG\r\n\x1a\n" + b"\x01" * 300}
        self.devices = [
            {"id": "ses_1", "name": "talkie on here", "current": True, "last_seen_at": None},
            {"id": "ses_2", "name": "phone\x1b[2J", "current": False, "created_at": "bad"},
        ]
        self.history = [
            agent_message(f"msg_{n:03d}", f"message {n}") for n in range(1, 8)
        ]  # oldest first
        self._ids = itertools.count(100)

    def app(self) -> Starlette:
        routes = [
            Route("/v1/auth/email/start", self.start, methods=["POST"]),
            Route("/v1/auth/email/verify", self.verify, methods=["POST"]),
            Route("/v1/auth/logout", self.logout, methods=["POST"]),
            Route("/v1/client/me", self.me),
            Route("/v1/client/me/storage", self.storage),
            Route("/v1/client/conversations", self.conversations),
            Route("/v1/client/conversations/{id}", self.conversation),
            Route("/v1/client/conversations/{id}/messages", self.messages, methods=["GET"]),
            Route("/v1/client/conversations/{id}/messages", self.send, methods=["POST"]),
            Route("/v1/client/conversations/{id}/stop", self.stop, methods=["POST"]),
            Route("/v1/client/conversations/{id}/read", self.read, methods=["POST"]),
            Route("/v1/client/media", self.upload, methods=["POST"]),
            Route("/v1/client/media/{id}", self.download),
            Route("/v1/client/devices", self.devices_list, methods=["GET"]),
            Route("/v1/client/devices", self.end_others, methods=["DELETE"]),
            Route("/v1/client/devices/{id}", self.end_device, methods=["DELETE"]),
        ]
        return Starlette(routes=routes)

    # --- helpers ---------------------------------------------------------------------------

    @staticmethod
    def signed_in(request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {TOKEN}"

    @staticmethod
    async def body(request: Request, allowed: set[str]) -> dict[str, Any] | Response:
        if request.headers.get("content-type", "").split(";")[0] != "application/json":
            return error(422, "unsupported_media_type", "The body must be JSON.")
        data = json.loads(await request.body())
        for key in data:
            if key not in allowed:
                return error(422, "unknown_field", f"Unknown field {key}.", field=key)
        return data

    # --- sign-in ---------------------------------------------------------------------------

    async def start(self, request: Request) -> Response:
        data = await self.body(request, {"email"})
        if isinstance(data, Response):
            return data
        if data["email"] == "busy@example.com":
            return error(
                429, "too_many_codes", "Wait before asking again.", **{"Retry-After": "120"}
            )
        return Response(status_code=204)

    async def verify(self, request: Request) -> Response:
        data = await self.body(request, {"email", "code", "device_name"})
        if isinstance(data, Response):
            return data
        if data["code"] != CODE:
            return error(401, "invalid_code", "That code is wrong or expired.")
        return JSONResponse(
            {
                "token": TOKEN,
                "session": {"id": "ses_1", "expires_at": "2026-10-01T10:00:00Z"},
                "user": USER,
                "is_new": False,
                "device_name_seen": data.get("device_name"),
            }
        )

    async def logout(self, request: Request) -> Response:
        if not self.signed_in(request):
            return error(401, "missing_credentials", "Sign in first.")
        return Response(status_code=204)

    # --- the person --------------------------------------------------------------------------

    async def me(self, request: Request) -> Response:
        if not self.signed_in(request):
            return error(401, "invalid_credentials", "The session is not valid.")
        return JSONResponse({"user": USER})

    async def storage(self, request: Request) -> Response:
        return JSONResponse(
            {
                "media": {"used_bytes": 1234, "budget_bytes": 100_000_000},
                "messages": {"kept_days": 90, "kept_since": "2026-04-02T00:00:00Z"},
            }
        )

    async def devices_list(self, request: Request) -> Response:
        return JSONResponse({"devices": [*self.devices, {"name": "no id"}]})

    async def end_others(self, request: Request) -> Response:
        self.devices = [device for device in self.devices if device["current"]]
        return Response(status_code=204)

    async def end_device(self, request: Request) -> Response:
        device_id = request.path_params["id"]
        if not any(device["id"] == device_id for device in self.devices):
            return error(404, "device_not_found", "No such device.")
        self.devices = [device for device in self.devices if device["id"] != device_id]
        return Response(status_code=204)

    # --- conversations ---------------------------------------------------------------------

    def conversation_json(self, conversation_id: str) -> dict[str, Any]:
        return {
            "id": conversation_id,
            "kind": "dm",
            "participants": [
                {"kind": "user", "id": "usr_01", "display_name": "Priya"},
                AGENT,
                {"display_name": "no kind, no id"},
            ],
            "last_message": self.history[-1],
            "unread_count": 2,
            "created_at": "2026-07-01T09:00:00Z",
        }

    async def conversations(self, request: Request) -> Response:
        if not self.signed_in(request):
            return error(401, "invalid_credentials", "The session is not valid.")
        rows = [self.conversation_json("cnv_01"), {"kind": "dm"}, "junk"]
        return JSONResponse({"conversations": rows})

    async def conversation(self, request: Request) -> Response:
        conversation_id = request.path_params["id"]
        if conversation_id == "cnv_moved":
            return Response(status_code=307, headers={"Location": self.moved_to})
        if conversation_id == "cnv_boom":
            return error(500, "internal", "Something broke.")
        if conversation_id == "cnv_proxy":
            return Response("<html>bad gateway</html>", 502, media_type="text/html")
        if conversation_id == "cnv_secret":
            return error(403, "not_participant", "You are not in this conversation.")
        if conversation_id == "cnv_clash":
            return error(409, "conflict_here", "It conflicts.")
        if conversation_id != "cnv_01":
            return error(404, "conversation_not_found", "No such conversation.")
        return JSONResponse({"conversation": self.conversation_json(conversation_id)})

    async def messages(self, request: Request) -> Response:
        query = request.query_params
        limit = int(query.get("limit", "50"))
        ids = [message["id"] for message in self.history]
        if "after" in query:
            start = ids.index(query["after"]) + 1
            page = self.history[start : start + limit]  # oldest first
            more = start + limit < len(ids)
            return JSONResponse(
                {
                    "messages": page,
                    "next_before": None,
                    "next_after": page[-1]["id"] if page and more else None,
                    "trimmed": False,
                }
            )
        end = ids.index(query["before"]) if "before" in query else len(ids)
        page = list(reversed(self.history[max(0, end - limit) : end]))  # newest first
        return JSONResponse(
            {
                "messages": [*page, {"id": "msg_broken"}],
                "next_before": page[-1]["id"] if end - limit > 0 else None,
                "next_after": None,
                "trimmed": end - limit <= 0,
            }
        )

    async def send(self, request: Request) -> Response:
        conversation_id = request.path_params["id"]
        data = await self.body(
            request, {"text", "attachments", "idempotency_key", "reply_to", "action"}
        )
        if isinstance(data, Response):
            return data
        key = data.get("idempotency_key")
        if not key:
            return error(
                422, "invalid_idempotency_key", "A key is needed.", field="idempotency_key"
            )
        if self.key_conversation.get(key, conversation_id) != conversation_id:
            return error(409, "idempotency_key_reused", "That key was used elsewhere.")
        if conversation_id == "cnv_flaky" and self.flaky_failures:
            self.flaky_failures -= 1
            return error(503, "unavailable", "Try again.")
        if conversation_id == "cnv_limited":
            return error(429, "rate_limited", "Slow down.", **{"Retry-After": "3"})
        if key in self.sent:
            return JSONResponse({"message": self.sent[key]}, 200)
        action = data.get("action")
        if action is not None and data.get("text"):
            return error(422, "invalid_action", "A tap carries no text.")
        text = "Raise complaint" if action else data.get("text", "")
        message = {
            "id": f"msg_{next(self._ids)}",
            "conversation_id": conversation_id,
            "sender": {"kind": "user", "id": "usr_01"},
            "body": {
                "text": text,
                **({"action": action} if action else {}),
                **(
                    {"attachments": [self.attachment(m) for m in data["attachments"]]}
                    if data.get("attachments")
                    else {}
                ),
            },
            "reply_to": (
                {"id": data["reply_to"], "sender_kind": "agent", "text_preview": "message 7"}
                if data.get("reply_to")
                else None
            ),
            "status": "complete",
            "truncated": False,
            "stopped": False,
            "delivery_status": "pending",
            "created_at": "2026-07-01T10:05:00Z",
        }
        self.sent[key] = message
        self.key_conversation[key] = conversation_id
        return JSONResponse({"message": message}, 201)

    def attachment(self, media_id: str) -> dict[str, Any]:
        return {
            "media_id": media_id,
            "kind": "image",
            "mime_type": "image/png",
            "byte_size": len(self.media.get(media_id, b"")),
            "file_name": "photo.png",
        }

    async def stop(self, request: Request) -> Response:
        stopped = agent_message("msg_050", "half an ans", stopped=True)
        stopped.update(stopped=True, truncated=True)
        return JSONResponse({"stopped": [stopped, {"id": "no sender"}]})

    async def read(self, request: Request) -> Response:
        data = await self.body(request, {"message_id"})
        if isinstance(data, Response):
            return data
        return Response(status_code=204)

    # --- media -----------------------------------------------------------------------------

    async def upload(self, request: Request) -> Response:
        body = await request.body()
        self.uploads.append((dict(request.query_params), body))
        media_id = f"med_{len(self.uploads)}"
        self.media[media_id] = body
        return JSONResponse(
            {
                "media": {
                    "id": media_id,
                    "kind": "image" if body.startswith(b"\x89PNG") else "file",
                    "mime_type": request.headers.get("content-type"),
                    "byte_size": len(body),
                    "file_name": request.query_params.get("name", ""),
                    "has_thumbnail": True,
                    "created_at": "2026-07-01T10:00:00Z",
                }
            },
            201,
        )

    async def download(self, request: Request) -> Response:
        if not self.signed_in(request):
            return error(401, "invalid_credentials", "The session is not valid.")
        media_id = request.path_params["id"]
        if media_id not in self.media:
            return error(404, "media_not_found", "That file is gone.")
        if request.query_params.get("variant") == "thumb":
            return Response(b"\xff\xd8\xffthumb", media_type="image/jpeg")
        return Response(self.media[media_id], media_type="application/octet-stream")
