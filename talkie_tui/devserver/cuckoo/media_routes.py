"""`POST /v1/{client,agent}/media` and `GET …/media/{id}`: uploads by raw body (`?name=`) or
multipart `file`, the kind from the bytes; downloads for the uploader and the conversation."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.multipart import file_field, parse_parts
from talkie_tui.devserver.common.served_files import DISPOSITION, DOWNLOAD_HEADERS
from talkie_tui.devserver.common.sniff import sniff
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, media, shapes
from talkie_tui.devserver.cuckoo.bodies import read_capped
from talkie_tui.devserver.cuckoo.errors import invalid, not_found, rate_limited
from talkie_tui.devserver.cuckoo.open_file import OpenFileResponse, open_or_none
from talkie_tui.devserver.cuckoo.principals import principal_of
from talkie_tui.devserver.cuckoo.routing import created, hub_of
from talkie_tui.devserver.cuckoo.voice_media import voice_facts


def _bad_form(message: str) -> Exception:
    return invalid("invalid_multipart", message)


async def upload(request: Request) -> JSONResponse:
    """Store an upload of the caller (person or agent) → 201 {media}."""
    hub = hub_of(request)
    principal = principal_of(request)
    owner_kind = principal.kind
    owner_id = principal.agent_id if owner_kind == "agent" else principal.user_id
    assert owner_id is not None
    rate = hub.config.upload_rate if owner_kind == "agent" else hub.config.person_upload_rate
    wait = hub.limiter.take("upload", owner_id, rate)
    if wait > 0:
        raise rate_limited(wait)
    cap = max(hub.config.max_bytes_of(kind) for kind in ("image", "audio", "video", "file"))
    raw = await read_capped(request, cap + 64 * 1024, code="file_too_large")
    content_type = request.headers.get("content-type", "")
    name = request.query_params.get("name")
    if content_type.lower().startswith("multipart/form-data"):
        part = file_field(parse_parts(raw, content_type, _bad_form), _bad_form)
        data, name = part.data, part.filename or name
    else:
        data = raw
    name = media.clean_name(name)
    if not data:
        raise invalid("empty_file", "The file is empty.")
    sniffed = sniff(data, claim_audio=request.query_params.get("kind") == "audio")
    limit = hub.config.max_bytes_of(sniffed.kind)
    if len(data) > limit:
        raise invalid("file_too_large", f"A file of kind {sniffed.kind} is at most {limit} bytes.")
    size = media.image_size(data) if sniffed.kind == "image" else None
    if size is not None and size[0] * size[1] > hub.config.image_max_pixels:
        raise invalid("image_too_large", "A picture is at most 50 megapixels.")
    # Every check before the first byte is written: a refused upload leaves nothing on disk.
    voice = voice_facts(request.query_params, sniffed.kind)
    thumb = media.thumbnail(data) if size is not None else None
    media_id = ids.new_id("med")
    record = {
        "id": media_id,
        "owner_kind": owner_kind,
        "owner_id": owner_id,
        "kind": sniffed.kind,
        "mime_type": sniffed.mime_type,
        "byte_size": len(data),
        "file_name": name,
        "width": size[0] if size else None,
        "height": size[1] if size else None,
        "has_thumbnail": thumb is not None,
        "duration_ms": voice.duration_ms,
        "waveform": voice.waveform,
        "created_at": clock.iso(clock.now()),
    }
    hub.media.write(media_id, data, thumb)
    try:
        row = hub.storage.add_media(record)
    except BaseException:
        hub.media.remove(media_id)
        raise
    return created({"media": shapes.media_json(row)})


def _readable(request: Request, row: Row | None) -> Row:
    principal = principal_of(request)
    viewer = principal.agent_id if principal.kind == "agent" else principal.user_id
    hub = hub_of(request)
    missing = not_found("media_not_found", "There is no such file.")
    if row is None or viewer is None:
        raise missing
    if row["owner_id"] == viewer:
        return row
    if row["conversation_id"] and hub.storage.is_participant(row["conversation_id"], viewer):
        return row
    raise missing


async def download(request: Request) -> Response:
    """The bytes of a file (`?variant=thumb`: the JPEG thumbnail of a picture)."""
    hub = hub_of(request)
    row = _readable(request, hub.storage.get_media(request.path_params["media_id"]))
    variant = request.query_params.get("variant")
    if variant not in (None, "thumb"):
        raise invalid("invalid_variant", "`variant` is thumb or absent.")
    if variant == "thumb" and not row["has_thumbnail"]:
        raise not_found("media_not_found", "This file has no thumbnail.")
    # Opened before answering: a sweep that deletes it now cannot cut the body short.
    file = open_or_none(hub.media.path(row["id"], variant))
    if file is None:
        raise not_found("media_not_found", "There is no such file.")
    mime = "image/jpeg" if variant == "thumb" else row["mime_type"]
    return OpenFileResponse(
        file,
        media_type=mime,
        filename=row["file_name"],
        disposition=DISPOSITION,
        headers=DOWNLOAD_HEADERS,
    )


MEDIA_ROUTES = [
    Route(f"/v1/{part}/media", upload, methods=["POST"]) for part in ("client", "agent")
] + [
    Route(f"/v1/{part}/media/{{media_id}}", download, methods=["GET"])
    for part in ("client", "agent")
]
