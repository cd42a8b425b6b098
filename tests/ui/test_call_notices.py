"""The call's notices: where the voice audio goes is said once per chat screen, known by the
notice's kind, whatever its words (they are in the UI's language)."""

from __future__ import annotations

from typing import Any, cast

from talkie_tui.ui.chat.call_controller import CallController
from talkie_tui.ui.chat.voice import VoiceOptions
from talkie_tui.voice.call_updates import Notice


class Host:
    """Records what the controller tells the person."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def notify(self, message: str, **_options: Any) -> None:
        self.said.append(message)


def test_the_provider_notice_is_said_once_and_only_its_kind_counts() -> None:
    host = Host()
    controller = CallController(cast(Any, host), cast(Any, None), VoiceOptions())

    controller._notice(Notice("Audio goes to provider.example.", kind="provider"))
    controller._notice(Notice("Audio goes to provider.example.", kind="provider"))
    controller._notice(Notice("Die Sprache geht an provider.example.", kind="provider"))
    # The same words without the kind are an ordinary notice, said each time.
    controller._notice(Notice("Audio goes to provider.example."))
    controller._notice(Notice("Audio goes to provider.example."))

    assert host.said == ["Audio goes to provider.example."] * 3
