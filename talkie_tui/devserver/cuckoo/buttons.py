"""The rules of buttons and quick replies (agents only; checked on send and on finish)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from talkie_tui.devserver.cuckoo.errors import invalid

MAX_ROWS = 3
MAX_PER_ROW = 3
LABEL_CHARS = 40
MAX_QUICK_REPLIES = 6
URL_CHARS = 2048
STYLES = ("default", "primary", "danger")
URL_SCHEMES = ("https", "http", "upi", "tel")
BUTTON_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
BUTTON_FIELDS = frozenset({"id", "url", "label", "style"})


def _bad(message: str) -> Exception:
    return invalid("invalid_buttons", message, field="buttons")


def _label(value: object, what: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value.strip()) <= LABEL_CHARS:
        raise _bad(f"{what}: a label is 1 to {LABEL_CHARS} characters.")
    return value.strip()


def _button(raw: object, seen: set[str]) -> dict[str, str]:
    if not isinstance(raw, dict) or not set(raw) <= BUTTON_FIELDS:
        raise _bad("A button is an object with `label`, `id` or `url`, and `style`.")
    button = {"label": _label(raw.get("label"), "Button")}
    button_id, url = raw.get("id"), raw.get("url")
    if (button_id is None) == (url is None):
        raise _bad("A button has an `id` or a `url`, never both.")
    if button_id is not None:
        if not isinstance(button_id, str) or not BUTTON_ID.fullmatch(button_id):
            raise _bad("A button id matches [A-Za-z0-9_.:-]{1,64}.")
        if button_id in seen:
            raise _bad(f"The button id {button_id!r} is used twice.")
        seen.add(button_id)
        button["id"] = button_id
    else:
        if not isinstance(url, str) or not 0 < len(url) <= URL_CHARS:
            raise _bad(f"A button url is at most {URL_CHARS} characters.")
        if urlsplit(url).scheme.lower() not in URL_SCHEMES:
            raise _bad("A button url's scheme is https, http, upi or tel.")
        button["url"] = url
    style = raw.get("style", "default")
    if style not in STYLES:
        raise _bad("A button style is default, primary or danger.")
    button["style"] = style
    return button


def parse_buttons(raw: Any) -> list[list[dict[str, str]]] | None:
    """Checked button rows (None when absent or empty)."""
    if raw is None or raw == []:
        return None
    if not isinstance(raw, list) or len(raw) > MAX_ROWS:
        raise _bad(f"Buttons are at most {MAX_ROWS} rows.")
    seen: set[str] = set()
    rows = []
    for row in raw:
        if not isinstance(row, list) or not 1 <= len(row) <= MAX_PER_ROW:
            raise _bad(f"A row holds 1 to {MAX_PER_ROW} buttons.")
        rows.append([_button(button, seen) for button in row])
    return rows


def parse_quick_replies(raw: Any) -> list[dict[str, str]] | None:
    """Checked quick replies (None when absent or empty)."""
    if raw is None or raw == []:
        return None
    if not isinstance(raw, list) or len(raw) > MAX_QUICK_REPLIES:
        raise invalid(
            "invalid_quick_replies",
            f"At most {MAX_QUICK_REPLIES} quick replies.",
            field="quick_replies",
        )
    replies = []
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"label"}:
            raise invalid(
                "invalid_quick_replies", "A quick reply is `{label}`.", field="quick_replies"
            )
        label = item["label"]
        if not isinstance(label, str) or not 1 <= len(label.strip()) <= LABEL_CHARS:
            raise invalid(
                "invalid_quick_replies",
                f"A quick reply label is 1 to {LABEL_CHARS} characters.",
                field="quick_replies",
            )
        replies.append({"label": label.strip()})
    return replies


def id_buttons(buttons: list[list[dict[str, str]]] | None) -> dict[str, dict[str, str]]:
    """The tappable buttons of a message by id."""
    return {b["id"]: b for row in buttons or [] for b in row if "id" in b}
