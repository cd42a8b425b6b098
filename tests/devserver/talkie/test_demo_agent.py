"""The demo CRM agent: intents, languages, Markdown, tool status, every card block, actions."""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from talkie_tui.devserver.talkie.demo_agent import INTENTS, match
from talkie_tui.devserver.talkie.demo_request import looks_czech
from tests.helpers import AUTH, TEST_TOKEN, ask, customs, text_of, types_of


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import serve_in_thread

    db_path = tmp_path_factory.mktemp("demo") / "demo.sqlite3"
    with serve_in_thread(ServerConfig(dev_token=TEST_TOKEN, db_path=db_path, demo_delay=0)) as url:
        yield url


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("help", "help"),
        ("pomoc", "help"),
        ("What meetings do I have today?", "meetings"),
        ("jaké mám dnes schůzky?", "meetings"),
        ("show Alfa", "lookup"),
        ("who is Petr Novák?", "lookup"),
        ("ukaž Alfu", "lookup"),
        ("Novák", "lookup"),
        ("show offer N-2026-014", "offer"),
        ("ukaž nabídky", "offer"),
        ("send the offer to Alfa", "send_offer"),
        ("pošli nabídku N-2026-014", "send_offer"),
        ("add a note to Beta: demo went well", "add_note"),
        ("přidej poznámku k Alfě: zavolat v pátek", "add_note"),
        ("delete contact Tomáš Dvořák", "delete_contact"),
        ("smaž kontakt Dvořák", "delete_contact"),
        ("pipeline overview", "pipeline"),
        ("přehled obchodů", "pipeline"),
        ("show unpaid invoices", "invoices"),
        ("hi", "greeting"),
        ("Dobrý den", "greeting"),
        ("thanks", "thanks"),
        ("history of the roman empire", "unknown"),
        ("talkie-test:echo x", "unknown"),
    ],
)
def test_intents(message: str, intent: str) -> None:
    assert match(message)[0] == intent


@pytest.mark.parametrize(
    ("text", "czech"),
    [
        ("jaké mám dnes schůzky?", True),
        ("jake mam dnes schuzky", True),
        ("pomoc", True),
        ("What meetings do I have today?", False),
        ("delete contact Tomáš Dvořák", False),
        ("who is Lucie Černá?", False),
        ("kdo je Lucie Černá?", True),
    ],
)
def test_language_detection(text: str, czech: bool) -> None:
    assert looks_czech(text) is czech


def test_help_lists_what_it_understands(http: httpx.Client, demo_url: str) -> None:
    english = text_of(ask(http, demo_url, "help"))
    czech = text_of(ask(http, demo_url, "pomoc"))
    for needle in ("meetings", "`show Alfa`", "`send the offer to Alfa`", "`delete contact"):
        assert needle in english
    for needle in ("Schůzky", "`pošli nabídku Alfě`", "`smaž kontakt"):
        assert needle in czech
    # The Markdown subset: numbered and bullet lists, bold, italic, code.
    assert re.search(r"^1\. ", english, re.M) and re.search(r"^- ", english, re.M)
    assert "**" in english and re.search(r"(?<!\*)\*[^*\s][^*]*\*(?!\*)", english)


def test_unknown_input_suggests_help(http: httpx.Client, demo_url: str) -> None:
    text = text_of(ask(http, demo_url, "tell me a joke about penguins"))
    assert "`help`" in text and "penguins" in text
    assert "`pomoc`" in text_of(ask(http, demo_url, "řekni mi vtip o tučňácích"))


def test_answers_in_czech(http: httpx.Client, demo_url: str) -> None:
    events = ask(http, demo_url, "jaké mám dnes schůzky?")
    assert "Dnes máte" in text_of(events)
    (card,) = customs(events, "talkie.card")
    assert card["title"] == "Dnešní schůzky"
    (start,) = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert start["metadata"]["label"] == "Prohlížím kalendář…"


def test_same_origin_links(http: httpx.Client, demo_url: str) -> None:
    text = text_of(ask(http, demo_url, "What meetings do I have today?"))
    links = re.findall(r"\[[^\]]+\]\((/[^)]+)\)", text)
    assert links
    for path in links:
        assert http.get(f"{demo_url}{path}").status_code == 200


def test_tool_status_labels_and_a_failing_tool(http: httpx.Client, demo_url: str) -> None:
    events = ask(http, demo_url, "show unpaid invoices")
    (start,) = [e for e in events if e["type"] == "TOOL_CALL_START"]
    (end,) = [e for e in events if e["type"] == "TOOL_CALL_END"]
    assert start["toolCallName"] == "fetch_invoices"
    assert start["metadata"]["label"].endswith("…")
    assert end["metadata"]["ok"] is False and "timeout" in end["metadata"]["error"]
    assert types_of(events)[-1] == "RUN_FINISHED"
    assert "/crm/invoices" in text_of(events)


def test_lookup_suggests_opening_the_record(http: httpx.Client, demo_url: str) -> None:
    events = ask(http, demo_url, "who is Petr Novák?")
    assert "novak@alfa.cz" in text_of(events)
    (link,) = customs(events, "talkie.open")
    assert link["url"] == "/crm/companies/alfa" and link["label"]
    (card,) = customs(events, "talkie.card")
    assert card["title"] == "Alfa s.r.o." and card["url"] == "/crm/companies/alfa"


DEMO_QUESTIONS = [
    "What meetings do I have today?",
    "show Alfa",
    "show Beta",
    "show Gamma",
    "show Delta",
    "show offer N-2026-014",
    "show offers",
    "pipeline overview",
]
ACTION_REQUESTS = [
    "add a note to Alfa: call back on Friday",
    "delete contact Tomáš Dvořák",
]


def _check_block(block: dict[str, Any]) -> None:
    kind = block["type"]
    required = {
        "heading": {"text"},
        "text": {"text"},
        "fields": {"fields"},
        "list": {"items"},
        "link": {"label", "url"},
        "file": {"name", "url"},
        "badge": {"text"},
    }[kind]
    assert required <= set(block)
    for key in ("url",):
        if key in block:
            assert block[key].startswith("/")


def test_cards_use_every_block_type_and_tone(http: httpx.Client, demo_url: str) -> None:
    all_cards = []
    for question in DEMO_QUESTIONS:
        all_cards += customs(ask(http, demo_url, question), "talkie.card")
    for request in ACTION_REQUESTS:
        (action,) = customs(ask(http, demo_url, request), "talkie.action")
        decision = http.post(
            f"{demo_url}/api/talkie/actions/{action['id']}/decision",
            json={"decision": "confirm", "paramsHash": action["paramsHash"], "method": "button"},
            headers=AUTH,
        ).json()
        all_cards += customs(decision["events"], "talkie.card")
    blocks = [block for card in all_cards for block in card["blocks"]]
    for card in all_cards:
        assert card["version"] == 1 and card["id"] and card["title"] and card["fallbackText"]
    for block in blocks:
        _check_block(block)
    assert {block["type"] for block in blocks} == {
        "heading", "text", "fields", "list", "link", "file", "badge",
    }  # fmt: skip
    assert {block["tone"] for block in blocks if block["type"] == "badge"} == {
        "neutral", "positive", "warning", "negative",
    }  # fmt: skip
    assert any(block.get("more") for block in blocks if block["type"] == "list")


def test_file_blocks_match_the_downloads(http: httpx.Client, demo_url: str) -> None:
    (card,) = customs(ask(http, demo_url, "show offer N-2026-014"), "talkie.card")
    (block,) = [block for block in card["blocks"] if block["type"] == "file"]
    response = http.get(f"{demo_url}{block['url']}", headers=AUTH)
    assert response.status_code == 200
    assert block["size"] == len(response.content)
    assert block["mime"] == response.headers["content-type"]


def test_missing_details_are_asked_for(http: httpx.Client, demo_url: str) -> None:
    for message, needle in [
        ("delete a contact", "Which contact"),
        ("add a note", "Which company"),
        ("send an offer by e-mail", "Which offer"),
    ]:
        events = ask(http, demo_url, message)
        assert needle in text_of(events)
        assert not customs(events, "talkie.action")


def test_text_streams_in_small_delayed_deltas(
    http: httpx.Client, devserver: Callable[..., str], pauses: list[float]
) -> None:
    url = devserver(demo_delay=0.01)
    events = ask(http, url, "help")
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert len(deltas) > 20
    assert max(len(delta.split()) for delta in deltas) <= 4
    assert pauses.count(0.01) >= len(deltas) - 1  # the demo delay between deltas


def test_without_demo_agent(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(demo_agent=False)
    assert "without an agent" in text_of(ask(http, url, "help"))


# --- every card says each thing once (issue 10.6) ------------------------------------------

# Every request the demo agent knows, in English and in Czech, and the test-mode ones that
# `talkie demo` also answers; the intents they reach are checked to be all of them.
EVERY_PROMPT = {
    "en": [
        *("help", "hi", "thanks", "tell me a joke", "what meetings do I have today?"),
        *("show Alfa", "show Beta", "show Gamma", "show Delta", "who is Petr Novák?"),
        *("show offer N-2026-014", "show offers", "pipeline overview", "unpaid invoices"),
        "add a note to Alfa: call back on Friday",
        "send the offer to Alfa",
        "delete contact Tomáš Dvořák",
        *("talkie-test:card", "talkie-test:action"),
    ],
    "cs": [
        *("pomoc", "ahoj", "děkuji", "řekni mi vtip", "jaké mám dnes schůzky?"),
        *("ukaž Alfu", "ukaž Betu", "ukaž Gammu", "ukaž Deltu", "kdo je Petr Novák?"),
        *("ukaž nabídku N-2026-014", "ukaž nabídky", "přehled obchodů", "nezaplacené faktury"),
        "přidej poznámku k Alfě: zavolat v pátek",
        "pošli nabídku Alfě",
        "smaž kontakt Tomáš Dvořák",
    ],
}
NUMBER = re.compile(r"\d+(?:[ .,:/\u00a0\u202f-]\d+)*")


def _plain(line: str) -> str:
    """A line as read: no Markdown marks, case or spacing differences, no final stop."""
    return " ".join(re.sub(r"[*`_]", "", line).casefold().split()).rstrip(".")


def visible_lines(card: dict[str, Any]) -> list[str]:
    """The lines of text CardView draws for a card. `fallbackText` stands in for the blocks (it
    is not drawn beside them) and a file's name is the file's own, so neither is among them."""
    lines = [card.get("title", ""), card.get("subtitle", "")]
    for block in card["blocks"]:
        kind = block["type"]
        if kind in ("heading", "badge"):
            lines.append(block["text"])
        elif kind == "text":
            lines += block["text"].splitlines()
        elif kind == "fields":
            lines += [f"{field['label']} {field['value']}" for field in block["fields"]]
        elif kind == "list":
            lines += [f"{item['title']} {item.get('subtitle', '')}" for item in block["items"]]
        elif kind == "link":
            lines.append(block["label"])
    return [line for line in map(_plain, lines) if line]


def _stems(text: str) -> set[str]:
    """The first five letters of each longer word, without diacritics ("Smazáno", "smazán")."""
    ascii_text = unicodedata.normalize("NFKD", text.casefold()).encode("ascii", "ignore").decode()
    return {word[:5] for word in re.findall(r"\w{4,}", ascii_text)}


def repetitions(card: dict[str, Any], text: str = "") -> list[str]:
    """What a card (with the text shown beside it, if any) says more than once."""
    lines = [*map(_plain, text.splitlines()), *visible_lines(card)]
    lines = [line for line in lines if line]
    found = [f"line twice: {line!r}" for line in sorted(set(lines)) if lines.count(line) > 1]
    found += [
        f"{short!r} inside {long!r}"
        for short in set(lines)
        for long in set(lines)
        if short != long and short in long
    ]
    numbers = [number for line in set(lines) for number in set(NUMBER.findall(line))]
    found += [f"{n!r} in two lines" for n in sorted(set(numbers)) if numbers.count(n) > 1]
    opened = [card.get("url")] + [b["url"] for b in card["blocks"] if b["type"] == "link"]
    opened = [url for url in opened if url]
    found += [f"{url} opened twice" for url in sorted(set(opened)) if opened.count(url) > 1]
    heading = _stems(f"{card.get('title', '')} {card.get('subtitle', '')}")
    for block in card["blocks"]:
        if block["type"] == "badge" and _stems(block["text"]) & heading:
            found.append(f"badge {block['text']!r} repeats the title or subtitle")
    return found


def test_the_repetition_check_finds_what_issue_10_saw() -> None:
    """The checker itself: the scheduled card as it was, and a badge that repeats the title."""
    before = {
        "title": "Sending scheduled",
        "subtitle": "Send offer N-2026-014 to novak@alfa.cz",
        "blocks": [
            {"type": "badge", "text": "Goes out in 10 s", "tone": "warning"},
            {"type": "text", "text": "Send offer N-2026-014 to novak@alfa.cz"},
            {"type": "text", "text": "You can still **cancel** it for 10 s."},
        ],
    }
    found = repetitions(before)
    assert "line twice: 'send offer n-2026-014 to novak@alfa.cz'" in found
    assert "'10' in two lines" in found
    sent = {"title": "Offer sent", "blocks": [{"type": "badge", "text": "Sent"}]}
    assert "badge 'Sent' repeats the title or subtitle" in repetitions(sent)
    deleted = {"title": "Kontakt smazán", "blocks": [{"type": "badge", "text": "Smazáno"}]}
    assert "badge 'Smazáno' repeats the title or subtitle" in repetitions(deleted)
    linked = {
        "title": "Alfa",
        "url": "/a",
        "blocks": [{"type": "link", "label": "Open", "url": "/a"}],
    }
    assert repetitions(linked) == ["/a opened twice"]


def test_every_demo_card_and_action_result_says_each_thing_once(
    http: httpx.Client, devserver: Callable[..., str]
) -> None:
    """Every card of every demo answer, every decision's result cards and every result stored
    in the thread (text and cards), in English and Czech: no line, number, link or badge twice."""
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_delay=0, undo_seconds=0.2)
    intents: set[str] = set()
    problems: dict[str, list[str]] = {}
    checked = 0

    def check(where: str, card: dict[str, Any], text: str = "") -> None:
        nonlocal checked
        checked += 1
        if found := repetitions(card, text):
            problems[where] = found

    for language, prompts in EVERY_PROMPT.items():
        for prompt in prompts:
            intents.add(match(prompt)[0])
            events = ask(http, url, prompt)
            for card in customs(events, "talkie.card"):
                check(f"{language} {prompt!r}: {card['title']}", card)
            for action in customs(events, "talkie.action"):
                decided = http.post(
                    f"{url}/api/talkie/actions/{action['id']}/decision",
                    json={
                        "decision": "confirm",
                        "paramsHash": action["paramsHash"],
                        "method": "button",
                    },
                    headers=AUTH,
                ).json()
                for card in customs(decided["events"], "talkie.card"):
                    check(f"{language} {prompt!r} confirmed: {card['title']}", card)
                status, deadline = decided["action"]["status"], time.monotonic() + 5
                while status == "running" and time.monotonic() < deadline:
                    time.sleep(0.1)  # an e-mail goes out (and is stored) after the undo window
                    current = http.get(f"{url}/api/talkie/actions/{action['id']}", headers=AUTH)
                    status = current.json()["status"]
                assert status == "done", prompt
                thread = http.get(
                    f"{url}/api/talkie/threads/{action['threadId']}", headers=AUTH
                ).json()
                results = [m for m in thread["messages"] if m["cards"]]
                assert results, f"{prompt!r}: no result in the thread"
                for message in results:
                    for card in message["cards"]:
                        check(
                            f"{language} {prompt!r} stored: {card['title']}",
                            card,
                            message["content"],
                        )
    assert intents == {intent.name for intent in INTENTS} | {"unknown"}
    assert checked >= 30  # answer cards, decision cards and stored results
    assert problems == {}
