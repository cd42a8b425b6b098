"""What Talkie cards, actions and tool labels become on a hub (pure functions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from talkie_tui.bridge import render
from talkie_tui.bridge.state import BridgeState
from talkie_tui.protocol.talkie.models import Action, Card

ORIGIN = "https://crm.example.com"


def resolve(url: str) -> str:
    return ORIGIN + url if url.startswith("/") else url


def card(**fields: Any) -> Card:
    return Card.model_validate({"fallbackText": "Alfa s.r.o. – client in Brno", **fields})


def action(**fields: Any) -> Action:
    base = {"id": "a_77", "summary": "Send offer N-1", "status": "pending", "paramsHash": "h"}
    return Action.model_validate({**base, **fields})


def test_a_card_is_its_fallback_text_and_fields() -> None:
    made = card(
        title="Alfa",
        blocks=[
            {"type": "badge", "text": "Active"},
            {
                "type": "fields",
                "fields": [{"label": "IČO", "value": 123}, {"label": "City", "value": "Brno"}],
            },
        ],
    )
    assert render.card_text(made) == "Alfa s.r.o. – client in Brno\n\nIČO: 123\nCity: Brno"


def test_card_links_become_https_url_buttons_only() -> None:
    made = card(
        title="Alfa s.r.o.",
        url="/crm/companies/alfa",
        blocks=[
            {"type": "link", "label": "Open the calendar", "url": "/crm/calendar"},
            {"type": "link", "label": "Plain", "url": "http://elsewhere.example.com/x"},
            {"type": "link", "label": "Script", "url": "javascript:alert(1)"},
            {"type": "link", "label": "Same again", "url": "/crm/companies/alfa"},
        ],
    )
    rows = render.card_buttons(made, resolve)
    assert rows == [
        [{"label": "Alfa s.r.o.", "url": ORIGIN + "/crm/companies/alfa"}],
        [{"label": "Open the calendar", "url": ORIGIN + "/crm/calendar"}],
    ]


def test_many_links_make_at_most_three_rows_of_three_with_short_labels() -> None:
    items = [{"title": f"Meeting number {n} " + "x" * 50, "url": f"/m/{n}"} for n in range(12)]
    rows = render.card_buttons(card(blocks=[{"type": "list", "items": items}]), resolve)
    assert len(rows) == 3 and all(len(row) == 3 for row in rows)
    assert all(1 <= len(b["label"]) <= 40 and b["label"].endswith("…") for r in rows for b in r)


def test_an_action_offers_confirm_and_cancel() -> None:
    low = render.action_buttons(action(riskLevel="low"), "a_77")
    assert low == [
        [
            {"id": "act:a_77:confirm", "label": "Confirm", "style": "primary"},
            {"id": "act:a_77:cancel", "label": "Cancel", "style": "default"},
        ]
    ]
    high = render.action_buttons(action(riskLevel="high"), "a_77")
    assert high == low  # its second step is asked in the hub (sure_buttons)
    sure = render.sure_buttons("a_77")
    assert [b["id"] for b in sure[0]] == ["act:a_77:sure", "act:a_77:cancel"]
    assert render.parse_action_button("act:a_77:sure") == ("a_77", "sure")
    assert "Send offer N-1" in render.action_text(action(riskLevel="high"))
    # A server that does not let a button decide gets no buttons.
    assert render.action_buttons(action(confirm={"methods": ["voice"]}), "a_77") == []


def test_action_keys_fit_button_ids_and_parse_back() -> None:
    assert render.action_key("a_77") == "a_77"
    odd = render.action_key("action/with spaces:and:colons")
    assert odd.startswith("h") and len(odd) == 33
    assert render.parse_action_button(f"act:{odd}:cancel") == (odd, "cancel")
    assert render.parse_action_button("act:a_77:confirm") == ("a_77", "confirm")
    for other in ("raise", "act:a_77:maybe", "act::confirm", None, 7, "act:a b:confirm"):
        assert render.parse_action_button(other) is None


def test_tool_labels_as_activity_labels() -> None:
    assert render.activity_label("Searching contacts…") == "Searching contacts…"
    assert render.activity_label("a\nb") == "a b"
    assert len(render.activity_label("x" * 80) or "") == 40
    assert render.activity_label("see https://example.com") is None
    assert render.activity_label("www.example.com") is None
    assert render.activity_label("\x1b[31m") is None


def test_decision_results_and_their_cards() -> None:
    done = action(status="done")
    assert render.decided_text(done, "confirm") == "Confirmed: Send offer N-1 — done."
    events = [
        {"type": "CUSTOM", "name": "talkie.card", "value": {"fallbackText": "Sent."}},
        {"type": "CUSTOM", "name": "talkie.card", "value": {"title": "no fallback"}},
        {"type": "TEXT_MESSAGE_CONTENT", "delta": "x"},
    ]
    assert [c.fallback_text for c in render.cards_of(events)] == ["Sent."]


def test_people_are_spoken_to_in_the_agents_language_not_the_operators() -> None:
    from talkie_tui.i18n import use_language

    czech, english = render.speech("cs-CZ"), render.speech("en")
    offer = action(riskLevel="high", status="running", undoUntil="2026-10-22T10:00:10Z")
    [[confirm, cancel]] = render.action_buttons(offer, "a_77", czech)
    assert (confirm["label"], cancel["label"]) == ("Potvrdit", "Zrušit")
    assert render.action_text(offer, czech).startswith("Agent žádá o souhlas: Send offer N-1")
    assert "(vysoké riziko)" in render.action_text(offer, czech)
    said = render.decided_text(offer, "confirm", czech)
    assert said.startswith("Potvrzeno: Send offer N-1 — probíhá. Do ") and "vrátit zpět" in said
    assert render.undo_buttons("a_77", 1765000000, czech)[0][0]["label"] == "Vrátit zpět"
    done = action(status="done")
    assert render.too_late_text(done, czech) == (
        "Omlouváme se, čas na vrácení už uplynul: Send offer N-1 — hotovo."
    )
    assert render.outcome_text(done, czech) == "Hotovo: Send offer N-1."
    # An operator whose terminal speaks Czech still offers an English agent's actions in English;
    # a server in a language talkie does not have gets English.
    use_language("cs")
    assert render.action_buttons(offer, "a_77", english)[0][0]["label"] == "Confirm"
    assert render.speech("de")("Undo") == "Undo" and render.speech(None)("Undo") == "Undo"
    assert render.action_buttons(offer, "a_77")[0][0]["label"] == "Potvrdit"  # the default: `_`


def test_outcomes_of_an_action_that_ran_after_its_undo_window() -> None:
    assert render.outcome_text(action(status="done")) == "Done: Send offer N-1."
    assert render.outcome_text(action(status="failed")) == "It could not be done: Send offer N-1."
    assert render.outcome_text(action(status="cancelled")) == "Send offer N-1 — cancelled."
    assert render.too_late_text(action(status="done")) == (
        "Sorry, the time to undo this has ended: Send offer N-1 — done."
    )


def test_the_state_file_keeps_what_was_handled(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    state = BridgeState(path)
    state.mark_handled("evt_1")
    state.set_cursor("agt_1", "evt_1")
    state.set_thread("cnv_1", "t_1")
    state.mark_told_private("cnv_2")
    state.mark_left("cnv_3")
    state.keep_action("a_1", "a_1", "cnv_1")
    state.close()
    again = BridgeState(path)
    assert again.is_handled("evt_1") and not again.is_handled("evt_2")
    assert again.cursor("agt_1") == "evt_1" and again.cursor("agt_2") is None
    assert again.thread_of("cnv_1") == "t_1" and again.thread_of("cnv_9") is None
    assert again.told_private("cnv_2") and not again.told_private("cnv_1")
    assert again.has_left("cnv_3")
    again.mark_joined("cnv_3")
    assert not again.has_left("cnv_3")
    kept = again.action("a_1")
    assert kept is not None and kept.conversation_id == "cnv_1"
    again.close()


def test_joins_and_leaves_count_in_the_hubs_order_not_their_arrival(tmp_path: Path) -> None:
    """A webhook's events may come out of order: an older join or leave changes nothing, and
    a message made after the leave (which the hub takes only from a member) is answered."""
    state = BridgeState(tmp_path / "state.sqlite3")
    assert state.mark_left("cnv_1", "2026-01-01T10:00:00.000Z")
    assert state.has_left("cnv_1")
    assert state.has_left("cnv_1", since="2026-01-01T09:59:59.000Z")
    assert not state.has_left("cnv_1", since="2026-01-01T10:00:01.000Z")  # joined again
    # The unblock's join, then the block's leave arriving late: still a member.
    assert state.mark_joined("cnv_2", "2026-01-01T10:00:02.000Z")
    assert not state.mark_left("cnv_2", "2026-01-01T10:00:01.000Z")
    assert not state.has_left("cnv_2")
    # Without the hub's time, in arrival order as before.
    assert state.mark_left("cnv_2") and state.has_left("cnv_2")
    assert state.mark_joined("cnv_2") and not state.has_left("cnv_2")
    state.close()


def test_a_pending_event_is_kept_until_handled(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    state = BridgeState(path)
    event = {"id": "evt_1", "type": "message.created", "data": {"text": "Dobrý den"}}
    state.keep_pending(event)
    state.keep_pending({"id": "evt_2", "type": "conversation.joined", "data": {}})
    state.keep_pending(event)  # posted twice: kept once
    state.close()
    again = BridgeState(path)
    assert [found["id"] for found in again.pending()] == ["evt_1", "evt_2"]
    assert again.pending()[0] == event
    again.mark_handled("evt_1", ("agt_1", "evt_1"))
    assert [found["id"] for found in again.pending()] == ["evt_2"]
    assert again.is_handled("evt_1") and again.cursor("agt_1") == "evt_1"
    again.close()


def test_the_state_file_forgets_ended_actions_after_a_day(tmp_path: Path) -> None:
    import sqlite3
    import time

    from talkie_tui.bridge.state import Follow

    path = tmp_path / "state.sqlite3"
    # A file from before `expires_at` / `ended_at` and `follows` gains them on open.
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE actions (key TEXT PRIMARY KEY, action_id TEXT, conversation_id TEXT)")
    old.execute("INSERT INTO actions VALUES ('a_0', 'a_0', 'cnv_1')")
    old.commit()
    old.close()
    state = BridgeState(path)
    now = time.time()
    state.keep_action("a_1", "a_1", "cnv_1", expires_at=now + 10_000)  # offered, open
    state.keep_action("a_2", "a_2", "cnv_1", expires_at=now - 90_000)  # expired, undecided
    state.keep_action("a_3", "a_3", "cnv_1", expires_at=now - 90_000)
    state.mark_action_decided("a_3")  # confirmed into its undo window, followed
    state.keep_follow(Follow("a_3", "a_3", "cnv_1", now - 89_000))
    state.keep_action("a_4", "a_4", "cnv_1")
    state.mark_action_ended("a_4")  # ended just now
    assert state.prune_actions() == 1  # a_2
    assert state.action("a_2") is None and state.action("a_3") is not None
    assert state.prune_actions(now + 90_000) == 1  # a_4, a day after it ended
    assert [f.key for f in state.follows()] == ["a_3"]
    state.drop_follow("a_3")
    state.mark_action_ended("a_3")
    assert state.prune_actions(now + 90_000) == 1
    assert {k for k in ("a_0", "a_1") if state.action(k)} == {"a_0", "a_1"}  # not ended
    state.close()
