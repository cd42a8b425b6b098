"""The actions of the call's keys (`CALL_BINDINGS`, `BARGE_IN_BINDING`), handed to the call.

A mixin of the chat screen: the screen binds the keys and Textual finds a key's action on the
screen, so the actions are the screen's own; they are written here, beside the call, because
each only hands the key to the screen's `CallController`. What the app and the tests read of
the call on a screen (`call`, `voice_bar`, `voice_offered`) comes with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from talkie_tui.ui.chat import voice as voice_ui
    from talkie_tui.ui.chat.call_controller import CallController
    from talkie_tui.ui.widgets.voice_bar import VoiceBar
    from talkie_tui.voice.call import VoiceCall

__all__ = ["CallKeys"]


class CallKeys:
    """F5 calls and hangs up, F6 (or Ctrl+Space) talks, F7 switches to hands-free, Esc
    interrupts the assistant; the screen decides with `voice.allows` when each applies. The
    call's updates come here too."""

    voice: CallController
    """The screen's one call."""

    @property
    def voice_offered(self) -> bool:
        """True when this server has voice endpoints and lets the signed-in person use them."""
        return self.voice.offered

    @property
    def call(self) -> VoiceCall | None:
        """The voice call that is on (or connecting), if any."""
        return self.voice.call

    @property
    def voice_bar(self) -> VoiceBar | None:
        """The voice bar, while a call is on."""
        return self.voice.bar

    def on_voice_update(self, message: voice_ui.VoiceUpdate) -> None:
        """What the call reports, from its own tasks: handed to the call."""
        message.stop()
        self.voice.update(message.call, message.update)

    def action_voice_call(self) -> None:
        """Start a voice call in the open thread (a new voice thread when none is open)."""
        self.voice.start()

    def action_hang_up(self) -> None:
        """End the voice call (while it connects: stop connecting)."""
        self.voice.hang_up()

    async def end_call(self, reason: str | None = None) -> None:
        """Hang up: the final usage report, then the peer and audio closed; safe without a call."""
        await self.voice.end(reason)

    def action_talk(self) -> None:
        """Push-to-talk: start talking; press again when done (terminals report no release)."""
        self.voice.talk()

    def action_barge_in(self) -> None:
        """Interrupt the assistant while it speaks."""
        self.voice.barge_in()

    def action_voice_mode(self) -> None:
        """Switch between push-to-talk and hands-free (the provider detects speech)."""
        self.voice.switch_mode()
