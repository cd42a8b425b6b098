"""SVG snapshots of the Minara parts in the real app: blocks, each kind of question, files.

The fake backend (`minara_fake`) plays fixed events through the real `MinaraConversation`, so
every run draws the same. No question here has an expiry: a countdown would differ per run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.question import QuestionView
from tests.ui.minara_fake import (
    CHART_TWO,
    TABLE,
    FakeMinaraBackend,
    answer_with,
    asking,
    event,
    minara_app,
)
from tests.ui.snapshot_steps import ready

SIZE = (120, 40)


async def ask(pilot: Pilot[None], text: str) -> ChatScreen:
    """Send `text`, let its events play, and wait until the screen is settled."""
    screen = await ready(pilot)
    screen.composer.insert(text)
    await pilot.press("enter")
    for _ in range(200):
        if len(screen.session.conversation.turns) >= 2 and (
            not screen.answering or screen.transcript.query(QuestionView)
        ):
            break
        await pilot.pause(0.02)
    await pilot.pause(0.1)
    for view in screen.transcript.query(QuestionView):
        while view.is_guarded:
            await pilot.pause(0.05)
    for box in screen.query("Input, TextArea"):
        box.cursor_blink = False  # type: ignore[attr-defined]  # a question's box came later
    await pilot.pause(0.1)
    return screen


def app_with(tmp_path: Path, backend: FakeMinaraBackend) -> TalkieApp:
    return minara_app(backend, tmp_path)


def test_table_and_chart(snap_compare, tmp_path: Path) -> None:
    """A table cut to fit, numbers right-aligned, and a two-series chart."""
    backend = FakeMinaraBackend()
    backend.scripts["Prices please"] = answer_with(TABLE, CHART_TWO, text="This week's prices:")

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "Prices please")

    assert snap_compare(app_with(tmp_path, backend), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("kind", ["select", "multi", "confirm", "input", "secret"])
def test_question(snap_compare, tmp_path: Path, kind: str) -> None:
    """Each kind of question, open, with the focus offered to its first control."""
    backend = FakeMinaraBackend()
    backend.scripts["Move my savings"] = asking(kind)

    async def run_before(pilot: Pilot[None]) -> None:
        await ask(pilot, "Move my savings")

    assert snap_compare(app_with(tmp_path, backend), terminal_size=SIZE, run_before=run_before)


def test_attachments_and_a_closed_question(snap_compare, tmp_path: Path) -> None:
    """Files on the person's turn; a question answered elsewhere, shrunk to one line."""
    backend = FakeMinaraBackend()
    backend.attachments["What does this chart show?"] = [
        AttachmentPart("k1", "chart.png", "image/png", 48_213, "image", "/v1/files/k1"),
        AttachmentPart("k2", "statement.pdf", "application/pdf", 1_204_000, "pdf"),
    ]
    backend.scripts["What does this chart show?"] = [
        event("start", session_id="sess_fake", turn_id="turn_1"),
        event("text_delta", text="I received chart.png, 48 kB and statement.pdf, 1204 kB. "),
        event(
            "todos",
            items=[{"text": "Read the chart", "done": True}, {"text": "Sum up", "done": False}],
        ),
        *asking("select")[2:],
        event("pending_question_resolved", id="q_1", outcome="answered"),
        event("text_delta", text="It shows a steady rise."),
        event("done"),
    ]

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await ask(pilot, "What does this chart show?")
        for _ in range(100):
            if not screen.answering:
                break
            await pilot.pause(0.02)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.1)

    assert snap_compare(app_with(tmp_path, backend), terminal_size=SIZE, run_before=run_before)
