"""The hub's seal on a message: HMAC-SHA256 over its immutable content, base64url unpadded.

An archive kept past the retention window can be checked against it later; the key never
leaves the hub (a fixed public key in dev mode, else one made once and kept in the database).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import secrets
from typing import Any

from talkie_tui.devserver.common.sqlite import Row

# `json.dumps(…, ensure_ascii=False, separators=(",", ":"))`, made once rather than per call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
DEV_KEY = "6375636b6f6f2d6465762d7369676e696e672d6b65792d6e6f742d7365637265"
META_NAME = "signing_key"


def make_key() -> str:
    """A fresh signing key (64 hex chars)."""
    return secrets.token_hex(32)


def signed_content(message: Row) -> bytes:
    """The fields a signature covers, as compact JSON in a fixed order."""
    body: dict[str, Any] = message["body"]
    content = {
        "id": message["id"],
        "conversation_id": message["conversation_id"],
        "sender_kind": message["sender_kind"],
        "sender_id": message["sender_id"],
        "text": body.get("text", ""),
        "attachments": [item["media_id"] for item in body.get("attachments", [])],
        "buttons": body.get("buttons"),
        "quick_replies": body.get("quick_replies"),
        "action": body.get("action"),
        "reply_to": message.get("reply_to_id"),
        "truncated": bool(message.get("truncated")),
    }
    return _COMPACT.encode(content).encode()


@functools.lru_cache(maxsize=8)
def _key_bytes(key_hex: str) -> bytes:
    return bytes.fromhex(key_hex)


def sign(key_hex: str, message: Row) -> str:
    """The signature of a message."""
    digest = hmac.digest(_key_bytes(key_hex), signed_content(message), hashlib.sha256)
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
