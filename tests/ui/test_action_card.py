"""Action cards (§8): the input guard, focus, high-risk second press, expiry, undo, errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from textual.widgets import Button, Input

from talkie_tui.core.errors import (
    ConflictError,
    ExpiredError,
    RateLimitedError,
    StaleError,
    TransportError,
)
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.ui.messages import DecisionRequested
from talkie_tui.ui.widgets.action_card import (
    ASK_AGAIN_SECONDS,
    ASK_AGAIN_TEXT,
    GUARD_SECONDS,
    ActionCard,
    explain_decision_error,
    format_remaining,
)
from tests.ui.apps.action_app import FakeClock, make_action, undo_until
from tests.ui.apps.cards_app import HarnessApp, screen_text

AFTER_GUARD = GUARD_SECONDS + 0.05
MARGIN = 0.25  # time a key press or click may take to be handled on a busy machine


def card_app(action: Action, clock: FakeClock | None, **options: Any) -> HarnessApp:
    """A harness with one ActionCard (the fake clock drives expiry, undo and the guard)."""
    timing = {"clock": clock, "monotonic": clock} if clock else {}
    return HarnessApp(lambda: [ActionCard(action, **timing)], **options)


def decisions(app: HarnessApp) -> list[str]:
    """The decisions posted so far."""
    return [m.decision for m in app.of_type(DecisionRequested)]  # type: ignore[attr-defined]


def button(app: HarnessApp, name: str) -> Button:
    """One of the card's buttons."""
    return app.query_one(f".action--{name}", Button)


# --- the input guard -----------------------------------------------------------------------


async def test_keys_in_the_first_half_second_do_not_decide_real_clock() -> None:
    """With the real clock: every key and click landing inside the guard is ignored."""
    app = card_app(make_action(expiresAt=None), clock=None)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        gestures = 0
        while card.guard_left > MARGIN:  # a gesture sent now is handled inside the guard
            if gestures % 3 == 2:
                await pilot.click(".action--cancel")
            else:
                await pilot.press("y" if gestures % 3 == 0 else "n")
            gestures += 1
        await pilot.pause()
        assert gestures >= 1
        assert decisions(app) == []
        while card.is_guarded:
            await pilot.pause(0.05)
        button(app, "confirm").focus()
        await pilot.press("enter")
        await pilot.pause()
    assert decisions(app) == ["confirm"]


async def test_after_the_guard_y_confirms_once() -> None:
    clock = FakeClock()
    action = make_action()
    app = card_app(action, clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        await pilot.press("y")
        assert decisions(app) == []
        clock.advance(AFTER_GUARD)
        await pilot.press("y", "y", "n")
        await pilot.pause()
        assert card.is_busy
        assert button(app, "confirm").disabled
        assert button(app, "cancel").disabled
        assert "Sending your decision" in screen_text(app)
    (message,) = app.of_type(DecisionRequested)
    assert isinstance(message, DecisionRequested)
    assert message.action is action
    assert message.decision == "confirm"


async def test_n_and_the_cancel_button_cancel() -> None:
    clock = FakeClock()
    app = card_app(make_action(), clock)
    async with app.run_test() as pilot:
        clock.advance(AFTER_GUARD)
        await pilot.click(".action--cancel")
        await pilot.pause()
        assert decisions(app) == ["cancel"]
        card = app.query_one(ActionCard)
        card.set_busy(False)
        card.focus()
        await pilot.press("n")
        await pilot.pause()
    assert decisions(app) == ["cancel", "cancel"]


async def test_the_card_never_takes_focus_from_a_composer_holding_text() -> None:
    clock = FakeClock()
    app = card_app(make_action(), clock, composer="half-typed")
    async with app.run_test() as pilot:
        await pilot.pause()
        composer = app.query_one("#composer", Input)
        assert app.focused is composer
        clock.advance(AFTER_GUARD)
        await pilot.press("y", "enter")
        await pilot.pause()
        assert app.focused is composer
        assert composer.value == "half-typedy"
    assert decisions(app) == []


async def test_showing_the_card_again_rearms_the_guard() -> None:
    clock = FakeClock()
    app = card_app(make_action(), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        clock.advance(AFTER_GUARD)
        assert not card.is_guarded
        card.arm_guard()
        card.focus()
        await pilot.press("y")
        assert decisions(app) == []


# --- high risk -----------------------------------------------------------------------------


async def test_high_risk_needs_a_second_press() -> None:
    clock = FakeClock()
    app = card_app(make_action(riskLevel="high"), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("y")
        await pilot.pause()
        assert decisions(app) == []
        assert card.asking_again
        assert ASK_AGAIN_TEXT in screen_text(app).replace("\n", "")
        await pilot.press("y")  # a repeated key right away is not a second decision
        assert decisions(app) == []
        clock.advance(AFTER_GUARD)
        await pilot.press("y")
        await pilot.pause()
    assert decisions(app) == ["confirm"]


async def test_the_second_question_lapses() -> None:
    clock = FakeClock()
    app = card_app(make_action(riskLevel="high"), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("y")
        clock.advance(ASK_AGAIN_SECONDS + 1)
        card.refresh_countdown()
        await pilot.pause()
        assert not card.asking_again
        assert ASK_AGAIN_TEXT not in screen_text(app)
        await pilot.press("y")  # asks again instead of deciding
        assert decisions(app) == []
        assert card.asking_again


async def test_cancel_needs_no_second_press_even_for_high_risk() -> None:
    clock = FakeClock()
    app = card_app(make_action(riskLevel="high"), clock)
    async with app.run_test() as pilot:
        app.query_one(ActionCard).focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("n")
        await pilot.pause()
    assert decisions(app) == ["cancel"]


# --- expiry --------------------------------------------------------------------------------


async def test_countdown_then_expiry_disables_the_buttons() -> None:
    clock = FakeClock()
    app = card_app(make_action(), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        await pilot.pause()
        assert "expires in 10:00" in screen_text(app)
        clock.advance(61)
        card.refresh_countdown()
        await pilot.pause()
        assert "expires in 8:59" in screen_text(app)
        clock.advance(540)
        card.refresh_countdown()
        await pilot.pause()
        text = screen_text(app)
        assert "expired" in text
        assert "expires in" not in text
        assert button(app, "confirm").disabled
        assert button(app, "cancel").disabled
        card.focus()
        await pilot.press("y", "n")
        await pilot.pause()
    assert decisions(app) == []


async def test_an_expired_card_and_the_ticker_lifecycle() -> None:
    app = card_app(make_action(expiresAt="2000-01-01T00:00:00Z"), clock=None)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "expired" in screen_text(app)
    app = card_app(make_action(), clock=FakeClock())
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        assert card._ticker is not None  # one timer, once a second
        card.update_action(make_action(status="done"))
        assert card._ticker is None


# --- undo ----------------------------------------------------------------------------------


async def test_undo_counts_down_and_cancels() -> None:
    clock = FakeClock()
    app = card_app(make_action(status="running", undoUntil=undo_until(8)), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        await pilot.pause()
        assert str(button(app, "undo").label) == "Undo (8s)"
        assert not button(app, "confirm").display
        clock.advance(3)
        card.refresh_countdown()
        assert str(button(app, "undo").label) == "Undo (5s)"
        await pilot.click(".action--undo")
        await pilot.pause()
    assert decisions(app) == ["cancel"]


async def test_undo_is_gone_after_the_deadline() -> None:
    clock = FakeClock()
    app = card_app(make_action(status="running", undoUntil=undo_until(2)), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(3)
        card.refresh_countdown()
        await pilot.press("n")
        await pilot.pause()
        assert not card.can_undo
        assert button(app, "undo").disabled
        assert "Undo" not in screen_text(app)
    assert decisions(app) == []


async def test_confirm_then_undo_window_then_done() -> None:
    clock = FakeClock()
    action = make_action()
    app = card_app(action, clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        clock.advance(AFTER_GUARD)
        button(app, "confirm").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is card  # the disabled button handed focus back to its card
        card.update_action(make_action(status="running", undoUntil=undo_until(30)))
        await pilot.press("n")  # the new Undo button is guarded too
        assert decisions(app) == ["confirm"]
        clock.advance(AFTER_GUARD)
        card.refresh_countdown()
        await pilot.press("n")
        await pilot.pause()
        assert decisions(app) == ["confirm", "cancel"]
        card.update_action(make_action(status="cancelled"))
        await pilot.pause()
        text = screen_text(app)
        assert "cancelled" in text
        assert "Confirm" not in text
        assert "Undo" not in text


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("done", "✓ done"),
        ("failed", "✗ failed"),
        ("cancelled", "cancelled"),
        ("expired", "expired"),
    ],
)
async def test_terminal_states_show_the_outcome_and_no_buttons(status: str, shown: str) -> None:
    clock = FakeClock()
    app = card_app(make_action(status=status), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("y", "n")
        await pilot.pause()
        text = screen_text(app)
        assert shown in text
        assert "Confirm" not in text
        assert "Cancel" not in text
        assert card.has_class(f"-{status}")
    assert decisions(app) == []


# --- errors and updates --------------------------------------------------------------------


async def test_show_error_explains_and_reenables() -> None:
    clock = FakeClock()
    app = card_app(make_action(), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("y")
        card.show_error("[b]The server said no.[/b]")
        await pilot.pause()
        assert "[b]The server said no.[/b]" in screen_text(app)
        assert not card.is_busy
        assert not button(app, "confirm").disabled
        await pilot.press("y")
    assert decisions(app) == ["confirm", "confirm"]


async def test_new_parameters_rearm_the_guard() -> None:
    clock = FakeClock()
    app = card_app(make_action(), clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(AFTER_GUARD)
        card.update_action(make_action(paramsHash="sha256:new", summary="Changed summary"))
        await pilot.press("y")
        await pilot.pause()
        assert decisions(app) == []
        assert "Changed summary" in screen_text(app)
        clock.advance(AFTER_GUARD)
        card.update_action(make_action(paramsHash="sha256:new", summary="Changed summary"))
        await pilot.press("y")  # same choice, same parameters: no new guard
    assert decisions(app) == ["confirm"]


def _response(status: int, code: str) -> httpx.Response:
    body = {"error": {"code": code, "message": "m", "retryable": False}}
    return httpx.Response(status, json=body)


def test_explain_decision_error() -> None:
    conflict = ConflictError("x", status=409, code="conflict", retryable=False)
    stale = StaleError("x", status=409, code="stale", retryable=False)
    expired = ExpiredError("x", status=410, code="expired", retryable=False)
    assert "already decided the other way" in explain_decision_error(conflict)
    assert "changed after it was shown" in explain_decision_error(stale)
    assert "expired" in explain_decision_error(expired)
    assert "Deciding again is safe" in explain_decision_error(TransportError("timed out"))
    limited = RateLimitedError("Slow down.", status=429, code="rate_limited", retryable=True)
    assert explain_decision_error(limited) == "Slow down. Trying again may help."
    assert "went wrong" in explain_decision_error(RuntimeError("boom"))


def test_format_remaining() -> None:
    assert format_remaining(-5) == "0s"
    assert format_remaining(0.2) == "1s"
    assert format_remaining(59) == "59s"
    assert format_remaining(600) == "10:00"
    assert format_remaining(3723) == "1:02:03"


async def test_an_unchanged_refresh_keeps_a_decision_in_flight() -> None:
    clock = FakeClock()
    action = make_action()
    app = card_app(action, clock)
    async with app.run_test() as pilot:
        card = app.query_one(ActionCard)
        card.focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("y")
        card.update_action(make_action())  # e.g. a GET action answered meanwhile
        await pilot.press("y")
        assert card.is_busy
        assert decisions(app) == ["confirm"]


# --- snapshots -----------------------------------------------------------------------------


def _snapshot_app(action: Action, clock: FakeClock) -> HarnessApp:
    return card_app(action, clock)


def test_snapshot_pending_low(snap_compare: Any) -> None:
    clock = FakeClock()
    app = _snapshot_app(make_action(riskLevel="low"), clock)
    assert snap_compare(app, terminal_size=(70, 9))


def test_snapshot_high_asking_again(snap_compare: Any) -> None:
    clock = FakeClock()
    app = _snapshot_app(make_action(riskLevel="high"), clock)

    async def press_confirm_once(pilot: Any) -> None:
        app.query_one(ActionCard).focus()
        clock.advance(AFTER_GUARD)
        await pilot.press("y")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(70, 10), run_before=press_confirm_once)


def test_snapshot_running_with_undo(snap_compare: Any) -> None:
    clock = FakeClock()
    app = _snapshot_app(make_action(status="running", undoUntil=undo_until(8)), clock)
    assert snap_compare(app, terminal_size=(70, 9))


def test_snapshot_done(snap_compare: Any) -> None:
    clock = FakeClock()
    app = _snapshot_app(make_action(status="done"), clock)
    assert snap_compare(app, terminal_size=(70, 6))
