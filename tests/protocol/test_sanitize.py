"""Server text is data (DESIGN "Rules that hold everywhere"): terminal control sequences are
removed from every string that can reach the screen, and markup is kept as plain characters."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator

import httpx
import pytest
from pydantic import BaseModel

from talkie_tui.core.errors import DiscoveryError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.errors import error_from_response
from talkie_tui.protocol.talkie.events import (
    ActionProposed,
    CardReceived,
    DecodedEvent,
    EventDecoder,
    LinkSuggested,
    UsageReported,
)
from talkie_tui.protocol.talkie.manifest import validate_manifest
from talkie_tui.protocol.talkie.models import HistoryMessage, Status, Thread
from tests.protocol.replay import play

# What must never reach a terminal: C0 controls except tab and newline, DEL, C1 controls.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize(
    ("dirty", "clean"),
    [
        ("copy \x1b]52;c;ZXZpbA==\x07me", "copy me"),
        ("osc with ST \x1b]0;title\x1b\\end", "osc with ST end"),
        ("8-bit OSC \x9d0;title\x9cend", "8-bit OSC end"),
        ("clear\x1b[2J screen", "clear screen"),
        ("colour \x1b[1;31mred\x1b[0m", "colour red"),
        ("8-bit CSI \x9b31mred", "8-bit CSI red"),
        ("DCS \x1bP+q544e\x1b\\done", "DCS done"),
        ("APC \x1b_payload\x1b\\done", "APC done"),
        ("charset \x1b(0lines", "charset lines"),
        ("lone escape \x1b", "lone escape "),
        ("bell\x07 nul\x00 del\x7f nel\x85 csi-alone\x9b", "bell nul del nel csi-alone"),
        ("crlf\r\nbecomes lf, lone\rcr goes", "crlf\nbecomes lf, lonecr goes"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
    ],
)
def test_control_sequences_are_removed(dirty: str, clean: str) -> None:
    """ESC/CSI/OSC/DCS sequences and C0/C1 controls go; newline and tab stay."""
    assert clean_text(dirty) == clean


@pytest.mark.parametrize(
    ("dirty", "clean"),
    [
        ("stray \x90DCS-looking byte, then words", "stray DCS-looking byte, then words"),
        ("stray C1s \x98sos \x9epm \x9fapc \x9dosc go on", "stray C1s sos pm apc osc go on"),
        ("OSC \x1b]0;never ends", "OSC ]0;never ends"),
        ("DCS \x1bP+q never ends", "DCS P+q never ends"),
        ("APC \x1b_never ends", "APC _never ends"),
        ("CSI at the end \x1b[12", "CSI at the end [12"),
        ("8-bit CSI at the end \x9b12;3", "8-bit CSI at the end 12;3"),
        ("CSI broken by \x1b[1ž text", "CSI broken by [1ž text"),
        ("no final after intermediates \x1b(", "no final after intermediates ("),
        ("OSC cut short \x1b]0;t\x1b[31mred", "OSC cut short ]0;tred"),
        ("DCS with BEL is not ended \x1bPab\x07cd", "DCS with BEL is not ended Pabcd"),
        ("a C1 inside cuts a DCS \x90ab\x85cd\x9c end", "a C1 inside cuts a DCS abcd end"),
        ("Ä\x8d and Ä\x90 mis-decoded č and Đ", "Ä and Ä mis-decoded č and Đ"),
    ],
)
def test_an_unterminated_introducer_goes_alone_and_the_text_after_it_stays(
    dirty: str, clean: str
) -> None:
    """Issue 10.5: an introducer whose sequence never ends in the same string is removed by
    itself; the printable characters after it are kept (a terminated sequence goes whole)."""
    assert clean_text(dirty) == clean


@pytest.mark.parametrize(
    "dirty",
    [
        "\x90" * 1_000_000,
        "\x9d" * 1_000_000,
        "\x9b" * 1_000_000,
        "\x1b]" * 500_000,
        "\x1bP" * 500_000,
        "\x1b[" * 500_000,
        "\x1b(" * 500_000,
        "\x1b]" + "a" * 1_000_000,
        "\x9d" + "a" * 1_000_000,
        "\x1bP" + "\x07" * 1_000_000,
        "\x1b[" + "1" * 1_000_000,
        "\x1b" + " " * 1_000_000,
        "\x1b]\x1bP\x9b1\x9d\x90\x1b[;\x1b( a" * 70_000,
    ],
    ids=lambda dirty: repr(dirty[:6]) + f"…{len(dirty)}",
)
def test_a_megabyte_of_introducers_is_cleaned_in_linear_time(dirty: str) -> None:
    """No backtracking blow-up: 1 MB of unterminated introducers is cleaned and leaves no control
    character. A quadratic cleaner would take minutes to hours here, so it never ends within the
    run's timeout (`timeout` in pyproject.toml); the time a megabyte takes is a figure of
    benchmarks/text_cost.py, not a bound of this test."""
    cleaned = clean_text(dirty)
    assert not CONTROL.search(cleaned)


@pytest.mark.parametrize(
    "text",
    ["[b]bold[/b] [link=https://x]x[/link]", "[red]not red[/red] \\[escaped]", "Příliš žluťoučký"],
)
def test_markup_and_unicode_are_kept_verbatim(text: str) -> None:
    """The protocol layer never interprets or strips Rich/Textual markup: it is data."""
    assert clean_text(text) == text


def _strings(value: object) -> Iterator[str]:
    """Every string inside an event (models, dataclasses, dicts, lists)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, BaseModel):
        yield from _strings(value.model_dump())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from _strings(getattr(value, item.name))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _assert_clean(events: list[DecodedEvent]) -> None:
    dirty = [text for event in events for text in _strings(event) if CONTROL.search(text)]
    assert dirty == []


async def test_every_string_of_a_hostile_stream_comes_out_clean(replay: TalkieClient) -> None:
    """Text, tool names and labels, tool errors, card texts, action summaries, link labels,
    usage labels and the run error all arrive without control sequences, markup intact."""
    _, events = await play(replay, "hostile.sse")

    _assert_clean(events)
    text = "".join(getattr(e, "delta", "") for e in events)
    assert "[red]markup[/red]" in text and "ok\ttab\nnewline\nCRLF" in text
    card = next(e.card for e in events if isinstance(e, CardReceived))
    assert (card.title, card.fallback_text) == ("Card title", "Fallback")
    action = next(e.action for e in events if isinstance(e, ActionProposed))
    assert action.summary == "Summary"
    link = next(e.link for e in events if isinstance(e, LinkSuggested))
    assert link.label == "Open"
    usage = next(e.usage for e in events if isinstance(e, UsageReported))
    assert usage[0].label == "Tokens"
    assert events[-1].message == "Failed [i]as data[/i]"


def test_raw_control_characters_inside_json_strings_are_removed() -> None:
    """A producer that puts raw ESC bytes into JSON strings (invalid JSON) is cleaned too."""
    raw = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"a\x1b[2Jb\x1b]52;c;x\x07c"}'
    (event,) = EventDecoder().decode(raw)
    assert event.delta == "abc"


def test_error_envelope_message_is_clean() -> None:
    """§3 messages are shown to the user: their control sequences are removed."""
    body = {"error": {"code": "internal\x1b[2J", "message": "Boom\x1b]52;c;x\x07 [b]!", "x": 1}}
    response = httpx.Response(500, json=body)

    error = error_from_response(response)

    assert (error.message, error.code) == ("Boom [b]!", "internal")


def test_manifest_texts_and_refusals_are_clean() -> None:
    """Manifest name/description/hint are cleaned; a refusal quoting the server is clean too."""
    origin = "https://crm.example.com"
    manifest, _ = validate_manifest(
        {
            "spec": "talkie/1",
            "issuer": origin,
            "serverId": "s",
            "name": "CRM\x1b[2J",
            "description": "Desc\x9b1m",
            "auth": {"token": {"hint": "Hint\x1b]52;c;x\x07"}},
        },
        origin,
    )
    assert (manifest.name, manifest.description, manifest.auth.token.hint) == (
        "CRM",
        "Desc",
        "Hint",
    )
    with pytest.raises(DiscoveryError) as refused:
        validate_manifest({"spec": "talkie/2\x1b]52;c;x\x07", "issuer": origin}, origin)
    assert not CONTROL.search(refused.value.message)


@pytest.mark.parametrize(
    ("model", "data", "field"),
    [
        (Status, {"user": {"name": "Jana\x1b[2J", "email": "j@x\x07"}}, "user"),
        (Thread, {"id": "t", "title": "Title\x1b]0;x\x07"}, "title"),
        (HistoryMessage, {"id": "m", "role": "user", "content": "Hi\x1b[2J"}, "content"),
    ],
)
def test_rest_answers_are_clean(model: type[BaseModel], data: dict, field: str) -> None:
    """Status, thread titles and stored messages reach the screen too."""
    parsed = model.model_validate(json.loads(json.dumps(data)))
    assert not [text for text in _strings(parsed) if CONTROL.search(text)]
