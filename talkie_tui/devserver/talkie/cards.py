"""Builders for §6 cards and their blocks (optional keys are left out, never null)."""

from __future__ import annotations

from typing import Any, Literal

from talkie_tui.devserver.common.ids import new_id

Card = dict[str, Any]
Block = dict[str, Any]
Tone = Literal["neutral", "positive", "warning", "negative"]


def _compact(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def card(
    title: str,
    blocks: list[Block],
    fallback_text: str,
    *,
    subtitle: str | None = None,
    url: str | None = None,
    a11y_label: str | None = None,
) -> Card:
    """A version-1 card with a fresh id."""
    return _compact(
        id=new_id("c"),
        version=1,
        title=title,
        subtitle=subtitle,
        url=url,
        blocks=blocks,
        fallbackText=fallback_text,
        a11yLabel=a11y_label,
    )


def heading(text: str) -> Block:
    """A `heading` block."""
    return {"type": "heading", "text": text}


def text(markdown: str) -> Block:
    """A `text` block (Markdown subset)."""
    return {"type": "text", "text": markdown}


def fields(*pairs: tuple[str, str]) -> Block:
    """A `fields` block from (label, value) pairs."""
    return {
        "type": "fields",
        "fields": [{"label": label, "value": value} for label, value in pairs],
    }


def item(title: str, subtitle: str | None = None, url: str | None = None) -> dict[str, str]:
    """One entry of a `list` block."""
    return _compact(title=title, subtitle=subtitle, url=url)


def list_block(items: list[dict[str, str]], more: int | None = None) -> Block:
    """A `list` block; `more` counts the entries not shown."""
    return _compact(type="list", items=items, more=more or None)


def link(label: str, url: str) -> Block:
    """A `link` block."""
    return {"type": "link", "label": label, "url": url}


def file(name: str, url: str, *, mime: str | None = None, size: int | None = None) -> Block:
    """A `file` block."""
    return _compact(type="file", name=name, mime=mime, size=size, url=url)


def badge(text: str, tone: Tone = "neutral") -> Block:
    """A `badge` block."""
    return {"type": "badge", "text": text, "tone": tone}
