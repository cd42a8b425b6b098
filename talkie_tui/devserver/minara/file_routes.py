"""HTTP endpoints for bytes: file upload and download, and voice transcription."""

from __future__ import annotations

import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from talkie_tui.devserver.common import body_cap
from talkie_tui.devserver.common.served_files import DISPOSITION, DOWNLOAD_HEADERS
from talkie_tui.devserver.minara.config import MIB
from talkie_tui.devserver.minara.errors import ApiError, invalid_request, not_found
from talkie_tui.devserver.minara.files import (
    ATTACHMENT_KINDS,
    decided_type,
    kind_of,
    media_type_of,
    size_limit_error,
)
from talkie_tui.devserver.minara.multipart import file_field, parse_parts
from talkie_tui.devserver.minara.services import Services

# Room for the multipart framing around a file at the size limit.
FORM_OVERHEAD = 64 * 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LANGUAGE = re.compile(r"[a-z]{2}")


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def read_capped(request: Request, limit: int) -> bytes:
    """The request body, or 413 as soon as it is longer than `limit` bytes."""
    message = f"The upload is over {limit / MIB:.0f} MiB, the largest accepted."
    return await body_cap.read_capped(
        request, limit, lambda: ApiError(413, "file_too_large", message)
    )


def clean_filename(name: str | None) -> str:
    """The name a client gave, without folders or control characters."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    return _CONTROL.sub("", base).strip()[:255] or "file"


async def upload(request: Request) -> JSONResponse:
    """POST /v1/files (multipart, field `file`)"""
    services = _services(request)
    config = services.config
    body = await read_capped(request, config.file_max_bytes + FORM_OVERHEAD)
    part = file_field(parse_parts(body, request.headers.get("content-type")))
    filename = clean_filename(part.filename)
    declared = media_type_of(part.content_type, filename)
    media_type = decided_type(part.data, declared)
    kind = kind_of(media_type) if kind_of(declared) is not None else None
    if kind is None:
        raise invalid_request(
            f"{filename} ({media_type}) is not a file the agent takes: "
            f"{', '.join(ATTACHMENT_KINDS)}."
        )
    if not part.data:
        raise invalid_request(f"{filename} is empty.")
    too_big = size_limit_error(filename, kind, len(part.data), config)
    if too_big is not None:
        raise too_big
    record = services.files.save(filename, media_type, kind, part.data)
    return JSONResponse(services.files.describe(record))


async def download(request: Request) -> FileResponse:
    """GET /v1/files/:key"""
    services = _services(request)
    key = request.path_params["key"]
    record = services.files.get(key)
    if record is None:
        raise not_found(f"File {key}")
    return FileResponse(
        services.files.path_of(record),
        media_type=record["media_type"],
        filename=record["filename"],
        content_disposition_type=DISPOSITION,
        headers={**DOWNLOAD_HEADERS, "Cache-Control": "private, max-age=3600"},
    )


def _persist(request: Request) -> bool:
    if "persist" not in request.query_params:
        return False
    return request.query_params["persist"].lower() not in ("0", "false", "no")


async def transcribe(request: Request) -> JSONResponse:
    """POST /v1/voice/transcribe?persist&language= (multipart WAV, field `file`)"""
    services = _services(request)
    language = request.query_params.get("language")
    if language is not None and not _LANGUAGE.fullmatch(language):
        raise invalid_request("`language` is an ISO-639-1 code such as `en`.")
    body = await read_capped(request, services.config.file_max_bytes + FORM_OVERHEAD)
    part = file_field(parse_parts(body, request.headers.get("content-type")))
    # In a worker thread: the first recording imports numpy and the provider's audio module.
    text = await run_in_threadpool(services.transcriber.transcribe, part.data)
    file_key = None
    if _persist(request):
        filename = clean_filename(part.filename or "recording.wav")
        record = services.files.save(filename, "audio/wav", "audio", part.data)
        file_key = record["key"]
    return JSONResponse({"ok": True, "text": text, "file_key": file_key})


FILE_ROUTES = [
    Route("/v1/files", upload, methods=["POST"]),
    Route("/v1/files/{key:path}", download, methods=["GET"]),
    Route("/v1/voice/transcribe", transcribe, methods=["POST"]),
]
