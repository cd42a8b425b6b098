"""A snapshot of the real app: two files waiting above the composer and a model chosen."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from talkie_tui.backends.base import ModelChoice
from talkie_tui.ui.screens.model_picker import ModelPick
from tests.ui.attachments import PDF, PNG, attach, chat, make_file
from tests.ui.extras_fake import ExtrasBackend, extras_app
from tests.ui.flows import until


def test_two_pending_files_and_a_model(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    backend = ExtrasBackend()
    chart = make_file(tmp_path, "chart.png", PNG, 48_213)
    report = make_file(tmp_path, "quarterly-report.pdf", PDF, 2_400_000)
    app = extras_app(backend, tmp_path)

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await chat(app, pilot)
        await attach(pilot, screen, chart)
        await attach(pilot, screen, report)
        await until(pilot, lambda: len(backend.uploaded) == 2)
        pro = ModelChoice("minara-pro", "Minara Pro", reasoning=True)
        screen.models.choose(ModelPick(pro, "high"))
        screen.composer.insert("What do the chart and the report say about Q3?")
        screen.composer.cursor_blink = False
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
