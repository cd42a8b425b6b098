"""The talkie/1 result cards (§6) and their blocks; a block this client cannot draw is kept as
an `UnknownBlock`, so the card shows its fallback text."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from talkie_tui.core.sanitize import SafeStr
from talkie_tui.protocol.talkie.wire_model import WireModel


class HeadingBlock(WireModel):
    """A heading line."""

    type: Literal["heading"] = "heading"
    text: SafeStr


class TextBlock(WireModel):
    """A paragraph in the Markdown subset of §7."""

    type: Literal["text"] = "text"
    text: SafeStr


class FieldItem(WireModel):
    """One label: value pair."""

    label: SafeStr
    value: SafeStr

    @field_validator("value", mode="before")
    @classmethod
    def _scalar_to_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int | float) else value


class FieldsBlock(WireModel):
    """Label/value pairs."""

    type: Literal["fields"] = "fields"
    fields: list[FieldItem]


class ListItem(WireModel):
    """One row of a list block."""

    title: SafeStr
    subtitle: SafeStr | None = None
    url: SafeStr | None = None


class ListBlock(WireModel):
    """Rows, with a count of rows the server left out."""

    type: Literal["list"] = "list"
    items: list[ListItem]
    more: int | None = Field(default=None, ge=0)


class LinkBlock(WireModel):
    """A labelled link."""

    type: Literal["link"] = "link"
    label: SafeStr
    url: SafeStr


class FileBlock(WireModel):
    """A downloadable file."""

    type: Literal["file"] = "file"
    name: SafeStr
    mime: str | None = None
    size: int | None = Field(default=None, ge=0)
    url: SafeStr


class BadgeBlock(WireModel):
    """A short status word with a tone."""

    type: Literal["badge"] = "badge"
    text: SafeStr
    tone: Literal["neutral", "positive", "warning", "negative"] = "neutral"

    @field_validator("tone", mode="before")
    @classmethod
    def _unknown_tone_is_neutral(cls, value: object) -> object:
        return value if value in ("neutral", "positive", "warning", "negative") else "neutral"


class UnknownBlock(WireModel):
    """A block this client cannot render: the card shows its fallbackText instead."""

    type: str = "unknown"


_BLOCK_TYPES: dict[str, type[WireModel]] = {
    "heading": HeadingBlock,
    "text": TextBlock,
    "fields": FieldsBlock,
    "list": ListBlock,
    "link": LinkBlock,
    "file": FileBlock,
    "badge": BadgeBlock,
}


Block = (
    HeadingBlock
    | TextBlock
    | FieldsBlock
    | ListBlock
    | LinkBlock
    | FileBlock
    | BadgeBlock
    | UnknownBlock
)


def _parse_block(raw: object) -> WireModel:
    """Parse one block; anything unknown or malformed becomes an UnknownBlock."""
    if isinstance(raw, dict):
        model = _BLOCK_TYPES.get(str(raw.get("type")))
        if model is not None:
            try:
                return model.model_validate(raw)
            except ValueError:
                pass
        return UnknownBlock(type=str(raw.get("type", "unknown")))
    return UnknownBlock()


class Card(WireModel):
    """A result card (§6). `fallbackText` is required: it stands in for what we cannot draw."""

    id: str = ""
    version: int = 1
    title: SafeStr = ""
    subtitle: SafeStr | None = None
    url: SafeStr | None = None
    blocks: list[Block] = Field(default_factory=list)
    fallback_text: SafeStr
    # Spelled out: the camelCase generator would make it "a11YLabel".
    a11y_label: SafeStr | None = Field(
        default=None, validation_alias="a11yLabel", serialization_alias="a11yLabel"
    )

    @field_validator("blocks", mode="before")
    @classmethod
    def _parse_blocks(cls, value: object) -> list[WireModel]:
        return [_parse_block(item) for item in value] if isinstance(value, list) else []

    @property
    def has_unknown_blocks(self) -> bool:
        """True when at least one block could not be understood."""
        return any(isinstance(block, UnknownBlock) for block in self.blocks)

    @property
    def label(self) -> str:
        """The accessible label: `a11yLabel`, else the title, else the fallback text."""
        return self.a11y_label or self.title or self.fallback_text
