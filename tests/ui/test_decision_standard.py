"""The decision standard and the person's keyboard, one behaviour suite over all three protocols.

Each scenario runs in the real `TalkieApp` against a reference server: the Talkie server (its
demo agent), the Minara gateway (its test mode) and the Cuckoo hub with the bridge serving the
Talkie demo agent (the pieces of `talkie demo --protocol cuckoo`). What a scenario needs of a
protocol (how to ask for a decision, which view shows it, when it is decided) is its `Rig`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widget import Widget

from talkie_tui.commands.demo_cuckoo import cuckoo_demo
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.action_card import ActionCard
from talkie_tui.ui.widgets.buttons import ButtonsView
from talkie_tui.ui.widgets.decision import DecisionView
from talkie_tui.ui.widgets.question import QuestionView
from tests.helpers import TEST_TOKEN
from tests.ui.flows import put_and_send, screen_text, until

pytestmark = pytest.mark.slow

SIZE = (120, 40)
WAIT = 60.0  # seconds a condition may take on a loaded two-core machine (a hub marks a button
# taken when its message comes again, which may be after the agent's whole answer)
UNDO_SECONDS = 4.0


class GuardClock:
    """The decisions' guard clock: it moves only when a scenario says so, so "a key pressed at
    once" stays at once however loaded the machine is."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def moved(self, seconds: float) -> bool:
        """Move on by `seconds` (True, to be polled in a wait)."""
        self.now += seconds
        return True


@pytest.fixture(autouse=True)
def guard_clock(monkeypatch: pytest.MonkeyPatch) -> GuardClock:
    """Every decision view of a scenario keeps its guard by this clock."""
    clock = GuardClock()
    monkeypatch.setattr(DecisionView, "clock", clock)
    return clock


@dataclass
class Rig:
    """One protocol's reference server, and how each scenario reaches its decisions there."""

    protocol: str
    app: Callable[[], TalkieApp]
    """A new app opened straight into the chat, as `talkie connect URL` opens it."""
    echo: str
    """A message whose answer repeats "early bird" (the type-ahead's)."""
    ask: str
    """A message whose answer waits for a decision that one press takes."""
    ask_risky: str
    """A message whose answer waits for a risky decision (a second step)."""
    view: type[DecisionView]
    """The view that shows this protocol's decisions."""

    def decided(self, view: DecisionView) -> bool:
        """True once the decision of `view` was made (here or on the server)."""
        if isinstance(view, ActionCard):
            return view.action.status != "pending"
        if isinstance(view, QuestionView):
            return view.part.outcome is not None
        assert isinstance(view, ButtonsView)
        return view.taken is not None


def _settings(tmp_path: Path) -> Settings:
    return Settings(downloads_dir=tmp_path / "downloads", token_storage="file")


@contextmanager
def _talkie(devserver: Callable[..., str], tmp_path: Path) -> Iterator[Rig]:
    url = devserver(
        test_mode=True,
        dev_token=TEST_TOKEN,
        demo_agent=True,
        demo_delay=0.0,
        undo_seconds=UNDO_SECONDS,
    )
    known = KnownServers.load(tmp_path / "servers.json")
    yield Rig(
        "talkie",
        lambda: TalkieApp(url, token=TEST_TOKEN, settings=_settings(tmp_path), known=known),
        "talkie-test:echo early bird",
        "add a note to Alfa: call back on Friday",
        "delete contact Tomáš Dvořák",
        ActionCard,
    )


@contextmanager
def _minara(minara_gateway: Callable[..., str], tmp_path: Path) -> Iterator[Rig]:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    known = KnownServers.load(tmp_path / "servers.json")

    def app() -> TalkieApp:
        return TalkieApp(
            url,
            gateway_token=TEST_TOKEN,
            protocol="minara",
            settings=_settings(tmp_path),
            known=known,
        )

    yield Rig(
        "minara",
        app,
        "minara-test:echo early bird",
        "minara-test:question select",
        "minara-test:question confirm",
        QuestionView,
    )


@contextmanager
def _cuckoo(tmp_path: Path) -> Iterator[Rig]:
    with cuckoo_demo(tmp_path / "demo", undo_seconds=UNDO_SECONDS) as demo:
        known = KnownServers.load(tmp_path / "servers.json")

        def app() -> TalkieApp:
            return TalkieApp(
                demo.hub_url,
                hub_token=demo.session_token,
                protocol="cuckoo",
                settings=_settings(tmp_path),
                known=known,
            )

        yield Rig(
            "cuckoo",
            app,
            "talkie-test:echo early bird",
            "add a note to Alfa: call back on Friday",
            "delete contact Tomáš Dvořák",
            ButtonsView,
        )


@pytest.fixture(params=["talkie", "minara", "cuckoo"])
def rig(
    request: pytest.FixtureRequest,
    devserver: Callable[..., str],
    minara_gateway: Callable[..., str],
    tmp_path: Path,
) -> Iterator[Rig]:
    """Each protocol's reference server in turn."""
    if request.param == "talkie":
        with _talkie(devserver, tmp_path) as rig:
            yield rig
    elif request.param == "minara":
        with _minara(minara_gateway, tmp_path) as rig:
            yield rig
    else:
        with _cuckoo(tmp_path) as rig:
            yield rig


# --- the person at the keyboard ----------------------------------------------------------------


@asynccontextmanager
async def chatting(rig: Rig) -> AsyncIterator[tuple[TalkieApp, Pilot[None], ChatScreen]]:
    """The rig's app, its chat on screen and connected."""
    app = rig.app()
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted, WAIT
        )
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await until(pilot, lambda: screen.header.state == "connected", WAIT)
        yield app, pilot, screen


async def send(pilot: Pilot[None], screen: ChatScreen, text: str) -> None:
    """Put `text` in the composer and press Enter. Only the asking is done so: what is typed
    while a decision shows, and at start, is pressed key by key (some 70 ms each)."""
    await put_and_send(pilot, screen, text)


def open_views(screen: ChatScreen, kind: type[DecisionView]) -> list[DecisionView]:
    """The decisions of `kind` on screen that wait for the person."""
    return [view for view in screen.transcript.query(kind) if view.is_open]


async def waiting(
    pilot: Pilot[None], screen: ChatScreen, kind: type[DecisionView], known: int = 0
) -> DecisionView:
    """The next decision of `kind` to appear (after `known` already open), once past its guard."""
    await until(pilot, lambda: len(open_views(screen, kind)) > known, WAIT)
    view = open_views(screen, kind)[-1]
    await until(pilot, lambda: view.first_control() is not None, WAIT)
    await guard_over(pilot, view)
    return view


def focus_in(screen: ChatScreen, view: Widget) -> bool:
    """True when the focus is on `view` or one of its controls."""
    return screen.focused is view or view.has_focus_within


async def guard_over(pilot: Pilot[None], view: DecisionView) -> None:
    """Let the input guard armed by the last press run out: the clock moves by the guard's time
    at each look, as the guard may be armed a frame later (when the view becomes answerable).
    A button just pressed also ignores Enter while it shows the press (Textual's own short
    effect, on the real clock), so that ends too."""
    clock = DecisionView.clock
    assert isinstance(clock, GuardClock)
    await until(pilot, lambda: clock.moved(view.guard_seconds) and not view.is_guarded, WAIT)
    await until(pilot, lambda: not view.query(".-active"), WAIT)


# --- the scenarios -----------------------------------------------------------------------------


async def test_keys_typed_at_start_go_into_the_composer(rig: Rig) -> None:
    """Typed from the app's first frame, before the server answered: every key lands in the
    composer, in order, and Enter sends it."""
    app = rig.app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*rig.echo, "enter")  # at once: the connect screen is still up
        await until(
            pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted, WAIT
        )
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await until(
            pilot,
            lambda: any(t.role == "user" for t in screen.session.conversation.turns),
            WAIT,
        )
        [sent] = [t for t in screen.session.conversation.turns if t.role == "user"]
        assert sent.text == rig.echo
        await until(pilot, lambda: "early bird" in screen_text(app).replace(rig.echo, ""), WAIT)
        assert screen.composer.text == "" and screen.focused is screen.composer


async def test_a_decision_never_takes_the_keyboard(rig: Rig) -> None:
    """A decision that arrives while the person types, and one that waits while they are idle:
    what they type lands in the composer, and nothing is decided."""
    async with chatting(rig) as (app, pilot, screen):
        await send(pilot, screen, rig.ask)
        await pilot.press(*"thanks")  # typing on while the answer comes
        view = await waiting(pilot, screen, rig.view)
        await pilot.press(*" y n", "space")  # idle, then typing again: y and n are letters here
        await guard_over(pilot, view)
        assert screen.composer.text == "thanks y n "
        assert screen.focused is screen.composer
        assert view.is_open and not rig.decided(view)
        assert screen.header.pending_actions >= 1  # it announces itself instead
        assert "Ctrl+O to answer" in screen_text(app)


async def test_ctrl_o_reaches_a_decision_arrows_move_esc_leaves_enter_decides(rig: Rig) -> None:
    """Ctrl+O goes to the decision, the arrows move between its choices, Esc goes back to the
    composer with its text untouched, and Enter then decides; the focus comes back."""
    async with chatting(rig) as (_app, pilot, screen):
        await send(pilot, screen, rig.ask)
        view = await waiting(pilot, screen, rig.view)
        await pilot.press(*"a draft")
        await pilot.press("ctrl+o")
        first = view.first_control()
        assert first is not None and screen.focused is first
        await pilot.press("down")
        moved = screen.focused
        assert moved is not first and moved is not None and focus_in(screen, view)
        await pilot.press("up")
        assert screen.focused is first
        await pilot.press("right", "left")
        assert screen.focused is first
        await pilot.press("escape")
        assert screen.focused is screen.composer and screen.composer.text == "a draft"
        assert view.is_open and not rig.decided(view)
        await pilot.press("ctrl+o", "enter")
        await until(pilot, lambda: rig.decided(view), WAIT)
        await until(pilot, lambda: screen.focused is screen.composer, WAIT)
        assert screen.composer.text == "a draft"
        await pilot.press("ctrl+o")  # nothing else is open: the focus stays where it is
        assert screen.focused is screen.composer


async def test_a_risky_decision_is_never_made_by_one_enter(rig: Rig) -> None:
    """A high-risk action, a Minara confirm, a hub's danger button: the first Enter only asks,
    a second one at once is ignored, and only a second press past the guard decides."""
    async with chatting(rig) as (_app, pilot, screen):
        await send(pilot, screen, rig.ask_risky)
        view = await waiting(pilot, screen, rig.view)
        if rig.protocol == "cuckoo":
            # The bridge's Confirm is a plain tap: the hub itself asks the second step, with a
            # danger button that talkie asks about once more.
            await pilot.press("ctrl+o", "enter")
            await until(pilot, lambda: rig.decided(view), WAIT)
            view = await waiting(pilot, screen, rig.view)
            assert "Yes, do it" in str(view.first_control().label)  # type: ignore[union-attr]
        await pilot.press("ctrl+o", "enter", "enter")
        await pilot.pause()
        assert view.second_step.asking and not rig.decided(view)
        await guard_over(pilot, view)
        await pilot.press("enter")
        await until(pilot, lambda: rig.decided(view), WAIT)


@pytest.mark.parametrize("rig", ["talkie", "minara"], indirect=True)
async def test_y_and_n_decide_a_confirm(rig: Rig) -> None:
    """y and n on a confirm (an action card, a Minara confirm). A hub's buttons carry labels,
    not a confirm, so Enter on the chosen button is their way (the scenario above)."""
    async with chatting(rig) as (_app, pilot, screen):
        ask = rig.ask if rig.protocol == "talkie" else rig.ask_risky
        await send(pilot, screen, ask)
        view = await waiting(pilot, screen, rig.view)
        await pilot.press("ctrl+o", "n")  # the refusal: one press
        await until(pilot, lambda: rig.decided(view), WAIT)
        if isinstance(view, ActionCard):
            assert view.action.status == "cancelled"
        else:
            assert isinstance(view, QuestionView) and view.part.answered_with == "Cancel"


@pytest.mark.parametrize("rig", ["talkie", "cuckoo"], indirect=True)
async def test_an_undo_goes_when_its_window_ends(rig: Rig) -> None:
    """Confirmed into its undo window, the action offers Undo (Ctrl+O reaches it); when the
    window ends the Undo goes, and Ctrl+O has nothing left to visit. (A Minara gateway has no
    undo window: its confirms are final.)"""
    async with chatting(rig) as (_app, pilot, screen):
        await send(pilot, screen, "send the offer to Alfa")
        view = await waiting(pilot, screen, rig.view)
        await pilot.press("ctrl+o", "enter")
        await until(pilot, lambda: rig.decided(view), WAIT)
        if isinstance(view, ActionCard):
            await until(pilot, lambda: view.can_undo, WAIT)
            undo: DecisionView = view
        else:
            undo = await waiting(pilot, screen, rig.view)  # the bridge's "Confirmed …, Undo"
        await until(pilot, lambda: screen.focused is screen.composer, WAIT)
        await pilot.press("ctrl+o")
        assert focus_in(screen, undo)  # open: Ctrl+O reaches it
        await until(pilot, lambda: not undo.is_open, UNDO_SECONDS + WAIT)
        await until(pilot, lambda: screen.focused is screen.composer, WAIT)  # given back
        assert not any(button.display for button in _undo_buttons(undo))
        await pilot.press("ctrl+o")
        assert screen.focused is screen.composer


def _undo_buttons(view: DecisionView) -> list[Any]:
    """The Undo buttons of a view (an action card's, or the bridge's)."""
    return [button for button in view.query("Button") if "Undo" in str(button.label)]


def made_the_risky_choice(view: DecisionView) -> bool:
    """True when the decision of `view` went to its risky choice (its first control)."""
    if isinstance(view, ActionCard):
        return view.action.status in ("confirmed", "running", "done")
    if isinstance(view, QuestionView):
        return view.part.answered_with == "Confirm"
    assert isinstance(view, ButtonsView)
    risky = view.first_control()
    return risky is not None and view.taken == getattr(risky, "button_id", None)


async def test_esc_drops_a_second_step_and_keys_in_one_burst_follow_the_arrow(rig: Rig) -> None:
    """A risky choice asked once, then Esc: coming back, it takes its two steps again. Keys that
    come in one burst (Ctrl+O → Enter, over a slow link) decide the choice the arrow moved to,
    never the one it left."""
    async with chatting(rig) as (_app, pilot, screen):
        await send(pilot, screen, rig.ask_risky)
        view = await waiting(pilot, screen, rig.view)
        if rig.protocol == "cuckoo":  # the hub's own second step, as in the scenario above
            await pilot.press("ctrl+o", "enter")
            await until(pilot, lambda: rig.decided(view), WAIT)
            view = await waiting(pilot, screen, rig.view)
        await pilot.press("ctrl+o", "enter")
        await pilot.pause()
        assert view.second_step.asking
        await guard_over(pilot, view)
        await pilot.press("escape")
        assert screen.focused is screen.composer and not view.second_step.asking
        await pilot.press("ctrl+o", "enter")
        await pilot.pause()
        assert view.second_step.asking and not rig.decided(view)  # asked again, not decided
        await guard_over(pilot, view)
        await pilot.press("escape", "ctrl+o", "right", "enter")
        await until(pilot, lambda: rig.decided(view), WAIT)
        assert not made_the_risky_choice(view)
