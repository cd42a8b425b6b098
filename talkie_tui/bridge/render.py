"""What a Talkie answer's parts become on a Cuckoo hub: plain text and rows of buttons.

Pure functions, no I/O. A card is its `fallbackText` and its fields, with URL buttons for its
links; an action is its summary with Confirm / Cancel buttons; a tool's label is an activity
label. Everything here keeps to the hub's rules (spec "Buttons", "Typing"): at most 3 rows of
1 to 3 buttons, labels of 1 to 40 characters, ids `[A-Za-z0-9_.:-]{1,64}`, URLs of at most 2048
characters — and, for the bridge, `https` only (a link the person opens must not be plain text
on the wire).

What the bridge says to a person on the hub is in the agent's language (`speech`: the Talkie
server's manifest `locale`, as the words to say in a voice call follow the call's language), not
the operator's: the bridge's own words sit beside the agent's answers and the action summaries,
which the agent writes in its language, and the hub does not tell the bridge what language the
person reads. The operator's terminal lines stay in the process's language (`_`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from talkie_tui.core.button_deadlines import with_deadline, without_deadline
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, SOURCE_LANGUAGE, _, catalog, language_of
from talkie_tui.protocol.talkie.cards import Card, FieldsBlock, LinkBlock, ListBlock
from talkie_tui.protocol.talkie.models import Action

__all__ = [
    "ACTIVITY_LABEL_CHARS",
    "LABEL_CHARS",
    "Button",
    "Speak",
    "action_buttons",
    "action_key",
    "action_text",
    "activity_label",
    "card_buttons",
    "card_text",
    "cards_of",
    "clip",
    "decided_text",
    "link_button",
    "outcome_text",
    "parse_action_button",
    "speech",
    "too_late_text",
    "undo_buttons",
    "url_rows",
]

Button = dict[str, str]
Speak = Callable[[str], str]
"""Translates a message (marked with `N_`) into the language the bridge speaks to people."""
LABEL_CHARS = 40
ACTIVITY_LABEL_CHARS = 40
MAX_ROWS = 3
MAX_PER_ROW = 3
MAX_URL = 2048
_BUTTON_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,48}$")
_ACTION_BUTTON = re.compile(r"^act:([A-Za-z0-9_.-]{1,48}):(confirm|cancel|sure)$")
ButtonDecision = Literal["confirm", "cancel", "sure"]
"""What an action's button asks: confirm (the first step), cancel (or undo), and `sure`, the
second step of a high-risk confirmation."""


def speech(locale: str | None) -> Speak:
    """How the bridge speaks to people: the agent's language (the Talkie server's `locale`)
    when talkie has it, else English."""
    language = language_of(locale) or SOURCE_LANGUAGE
    if language == SOURCE_LANGUAGE:
        return str
    return catalog(language).gettext


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters (an ellipsis where it was cut)."""
    line = " ".join(clean_text(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def activity_label(label: str) -> str | None:
    """A tool's label as the hub takes an activity label (one line, ≤ 40, no links)."""
    line = clip(label, ACTIVITY_LABEL_CHARS)
    lowered = line.lower()
    if not line or "://" in lowered or "www." in lowered:
        return None
    return line


def link_button(label: str, url: str, resolve: Callable[[str], str]) -> Button | None:
    """A URL button, when `url` (absolute, or a path of the Talkie server) is https."""
    try:
        absolute = resolve(url)
    except (ValueError, TypeError):
        return None
    text = clip(label, LABEL_CHARS)
    if not text or not absolute.startswith("https://") or len(absolute) > MAX_URL:
        return None
    if any(ord(char) < 33 for char in absolute):
        return None
    return {"label": text, "url": absolute}


def url_rows(buttons: Iterable[Button]) -> list[list[Button]]:
    """Rows of URL buttons: one per row up to three, else rows of three (at most nine);
    the same address twice is shown once."""
    unique: list[Button] = []
    for button in buttons:
        if all(button["url"] != seen["url"] for seen in unique):
            unique.append(button)
    unique = unique[: MAX_ROWS * MAX_PER_ROW]
    if len(unique) <= MAX_ROWS:
        return [[button] for button in unique]
    return [unique[at : at + MAX_PER_ROW] for at in range(0, len(unique), MAX_PER_ROW)]


def card_text(card: Card) -> str:
    """A card as a message: its fallbackText, then its fields as `label: value` lines."""
    lines = [card.fallback_text.strip() or card.title]
    fields = [
        f"{clean_text(item.label)}: {clean_text(item.value)}"
        for block in card.blocks
        if isinstance(block, FieldsBlock)
        for item in block.fields
    ]
    if fields:
        lines.append("")
        lines.extend(fields)
    return "\n".join(lines).strip()


def card_buttons(card: Card, resolve: Callable[[str], str], speak: Speak = _) -> list[list[Button]]:
    """URL buttons for a card's links: its title's record, link blocks, then list rows."""
    found: list[Button | None] = []
    if card.url:
        found.append(link_button(card.title or speak(N_("Open")), card.url, resolve))
    for block in card.blocks:
        if isinstance(block, LinkBlock):
            found.append(link_button(block.label, block.url, resolve))
    for block in card.blocks:
        if isinstance(block, ListBlock):
            found.extend(link_button(i.title, i.url, resolve) for i in block.items if i.url)
    return url_rows(button for button in found if button is not None)


def action_key(action_id: str) -> str:
    """The part of a button id that names an action: its id when it fits, else a digest."""
    if _KEY.match(action_id):
        return action_id
    return "h" + hashlib.sha256(action_id.encode()).hexdigest()[:32]


_RISK = {"low": N_("low risk"), "medium": N_("medium risk"), "high": N_("high risk")}


def action_text(action: Action, speak: Speak = _) -> str:
    """An action as a message: what it would do, how risky it is, until when it waits."""
    text = speak(N_("The agent asks to do this: {summary}")).format(summary=action.summary)
    text += f"\n({speak(_RISK[action.risk_level])})"
    if "button" not in action.confirm.methods:
        text += "\n" + speak(N_("This one cannot be decided with a button here."))
    return text


def action_buttons(action: Action, key: str, speak: Speak = _) -> list[list[Button]]:
    """Confirm / Cancel (a high-risk Confirm asks once more: `sure_buttons`)."""
    if "button" not in action.confirm.methods:
        return []
    return [
        [
            {"id": f"act:{key}:confirm", "label": speak(N_("Confirm")), "style": "primary"},
            {"id": f"act:{key}:cancel", "label": speak(N_("Cancel")), "style": "default"},
        ]
    ]


def sure_text(action: Action, speak: Speak = _) -> str:
    """The second step of a high-risk confirmation, asked in the hub itself."""
    return speak(
        N_("{summary}? This is a high-risk action: nothing is done until you say so once more.")
    ).format(summary=action.summary.rstrip(".?! "))


def sure_buttons(key: str, speak: Speak = _) -> list[list[Button]]:
    """The buttons of a high-risk action's second step: do it (`danger`), or cancel it."""
    return [
        [
            {"id": f"act:{key}:sure", "label": speak(N_("Yes, do it")), "style": "danger"},
            {"id": f"act:{key}:cancel", "label": speak(N_("No, cancel it")), "style": "default"},
        ]
    ]


def undo_buttons(key: str, until: float, speak: Speak = _) -> list[list[Button]]:
    """An Undo button for an outbound action still in its undo window (undoing is the safe way:
    one tap, no second step), its id marked with the window's end (`core/button_deadlines`)."""
    button_id = with_deadline(f"act:{key}:cancel", until)
    return [[{"id": button_id, "label": speak(N_("Undo")), "style": "primary"}]]


def parse_action_button(button_id: Any) -> tuple[str, ButtonDecision] | None:
    """(action key, what it asks) of a Confirm / Cancel / Undo / sure button id, else None."""
    if not isinstance(button_id, str) or not _BUTTON_ID.match(button_id):
        return None
    found = _ACTION_BUTTON.match(without_deadline(button_id))
    if found is None:
        return None
    decision: ButtonDecision = found.group(2)  # type: ignore[assignment]
    return found.group(1), decision


_STATUS = {
    "pending": N_("waiting"),
    "running": N_("running"),
    "done": N_("done"),
    "failed": N_("failed"),
    "cancelled": N_("cancelled"),
    "expired": N_("expired"),
}


def decided_text(action: Action, decision: str, speak: Speak = _) -> str:
    """What a person is told after a decision: what was decided and where the action is now."""
    said = speak(N_("Confirmed")) if decision == "confirm" else speak(N_("Cancelled"))
    text = f"{said}: {action.summary} — {speak(_STATUS[action.status])}."
    if action.status == "running" and action.undo_until is not None:
        until = action.undo_until.astimezone().strftime("%H:%M:%S")
        text += " " + speak(N_("You can undo it until {time}.")).format(time=until)
    return text


def outcome_text(action: Action, speak: Speak = _) -> str:
    """What a person is told when an action that was running (in its undo window) ended and
    the Talkie server gave no result card for it."""
    if action.status == "done":
        return speak(N_("Done: {summary}.")).format(summary=action.summary)
    if action.status == "failed":
        return speak(N_("It could not be done: {summary}.")).format(summary=action.summary)
    return f"{action.summary} — {speak(_STATUS[action.status])}."


def too_late_text(action: Action, speak: Speak = _) -> str:
    """The answer to an Undo tapped after the undo window ended (the hub cannot take the
    button back from a sent message)."""
    return speak(N_("Sorry, the time to undo this has ended: {summary} — {status}.")).format(
        summary=action.summary, status=speak(_STATUS[action.status])
    )


def cards_of(events: Sequence[dict[str, Any]]) -> list[Card]:
    """The `talkie.card` values among a decision's AG-UI events (unreadable ones skipped)."""
    found: list[Card] = []
    for event in events:
        if event.get("type") == "CUSTOM" and event.get("name") == "talkie.card":
            try:
                found.append(Card.model_validate(event.get("value")))
            except ValueError:
                continue
    return found
