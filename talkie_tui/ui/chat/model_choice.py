"""The model of each thread's next messages (`capabilities.models`): chosen, shown, sent.

The palette's "Model for this thread" asks the server for its models (`ChoosesModel.models`)
and shows `ModelPickerScreen`; the pick holds for the thread it was made in, for every message
sent there until another pick, and never changes the server's default (each message names its
model, `prepare(..., model=, reasoning_effort=)`). The composer's title names the choice. A
thread is known by its id; a new thread's pick is kept with its conversation until the server
gives it an id, so it moves with the thread, not with the composer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.screens.model_picker import (
    EFFORT_NAMES,
    ModelPick,
    ModelPickerScreen,
    model_label,
)

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, ChoosesModel
    from talkie_tui.chat.conversation import Conversation

__all__ = ["ThreadModels", "describe_pick"]


def describe_pick(pick: ModelPick) -> str:
    """The choice as the composer's title shows it: "Minara Pro · high effort"."""
    if pick.model is None:
        return ""
    name = model_label(pick.model)
    if pick.effort is None:
        return name
    return _("{model} · {effort} effort").format(model=name, effort=_(EFFORT_NAMES[pick.effort]))


class ThreadModels:
    """The model picked in each thread of one chat screen."""

    def __init__(self, host: ChatHost, backend: Backend) -> None:
        self._host = host
        self._backend = backend
        self._by_thread: dict[str, ModelPick] = {}
        self._fresh: tuple[Conversation, ModelPick] | None = None  # a new thread's, until its id

    @property
    def offered(self) -> bool:
        """True when the server lets a message choose its model."""
        return self._backend.info.capabilities.models

    def current(self) -> ModelPick | None:
        """The pick of the thread on screen (None: the server's default)."""
        conversation = self._host.session.conversation
        thread_id = conversation.thread_id
        if self._fresh is not None and self._fresh[0] is conversation:
            if thread_id is None:
                return self._fresh[1]
            self._by_thread[thread_id] = self._fresh[1]  # the new thread got its id
            self._fresh = None
        return self._by_thread.get(thread_id) if thread_id else None

    def choose(self, pick: ModelPick) -> None:
        """Keep `pick` for the thread on screen (a pick of no model forgets the choice)."""
        conversation = self._host.session.conversation
        thread_id = conversation.thread_id
        if thread_id is None:
            self._fresh = (conversation, pick) if pick.model is not None else None
        elif pick.model is None:
            self._by_thread.pop(thread_id, None)
        else:
            self._by_thread[thread_id] = pick
        self.show()

    def extras(self) -> dict[str, Any]:
        """The keyword arguments of `prepare` for the thread's pick ({} without one)."""
        pick = self.current()
        if not self.offered or pick is None or pick.model is None:
            return {}
        return {"model": pick.model.id, "reasoning_effort": pick.effort}

    def show(self) -> None:
        """Name the thread's pick in the composer's title (nothing for the default)."""
        pick = self.current() if self.offered else None
        self._host.composer.set_note(describe_pick(pick) if pick is not None else "")

    # --- the picker ----------------------------------------------------------------------

    def pick(self) -> None:
        """Ask the server for its models, then let the person pick one for this thread."""
        if not self.offered:
            self._host.notify(
                _("This server does not let a message choose its model."), markup=False
            )
            return
        self._host.run_worker(self._pick, name="models", group="models", exclusive=True)

    async def _pick(self) -> None:
        chooser = cast("ChoosesModel", self._backend)  # `capabilities.models` says it is one
        try:
            models = await chooser.models()
        except TalkieError as error:
            if not self._host.sign_in_needed(error):
                self._host.notify(
                    _("The models could not be loaded: {error}").format(error=error.message),
                    severity="error",
                    markup=False,
                )
            return
        if not models.models:
            self._host.notify(_("The server offers no models to choose from."), markup=False)
            return
        conversation = self._host.session.conversation

        def picked(pick: ModelPick | None) -> None:
            # The thread may have changed under the picker: the pick is for the one it was for.
            if pick is not None and self._host.session.conversation is conversation:
                self.choose(pick)

        self._host.app.push_screen(ModelPickerScreen(models, self.current()), picked)
