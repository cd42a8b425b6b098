"""Choose the model of a thread's next messages, then its reasoning effort where it takes one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings

if TYPE_CHECKING:
    from talkie_tui.backends.base import ModelChoice, ModelList, ReasoningEffort

__all__ = ["EFFORTS", "ModelPick", "ModelPickerScreen"]

EFFORTS: tuple[ReasoningEffort, ...] = ("low", "medium", "high")
EFFORT_NAMES = {"low": N_("low"), "medium": N_("medium"), "high": N_("high")}
_DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class ModelPick:
    """What was picked: a model with its effort, or the server's default (`model` None)."""

    model: ModelChoice | None
    effort: ReasoningEffort | None = None


def model_label(model: ModelChoice) -> str:
    """A model as the person reads it: its label (the id when it has none)."""
    return clean_text(model.label or model.id)


class ModelPickerScreen(LocalizedBindings, ModalScreen[ModelPick | None]):
    """The server's models, then an effort for a model with reasoning; Esc changes nothing."""

    HELP_GROUP = N_("Model picker")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", N_("Close"))]

    def __init__(self, models: ModelList, current: ModelPick | None = None) -> None:
        super().__init__()
        self.models = models
        self.current = current or ModelPick(None)
        self._model: ModelChoice | None = None  # chosen in the first step, taking an effort

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker-box model-picker-box"):
            yield Static(
                Text(_("Model for this thread (its next messages only)")),
                id="model-picker-title",
                classes="picker-title",
            )
            yield OptionList(*self._model_options(), markup=False, classes="picker-list")

    def _model_options(self) -> list[Option]:
        default_id = self.models.default
        default = next((m for m in self.models.models if m.id == default_id), None)
        chosen = self.current.model.id if self.current.model is not None else None
        name = model_label(default) if default is not None else _("the server's choice")
        options = [
            Option(
                self._row(_("Server default ({name})").format(name=name), chosen is None, ""),
                id=_DEFAULT,
            )
        ]
        for model in self.models.models:
            notes = [_("reasoning")] if model.reasoning else []
            if model.id == default_id:
                notes.append(_("default"))
            options.append(
                Option(
                    self._row(model_label(model), model.id == chosen, " · ".join(notes)),
                    id=model.id,
                )
            )
        return options

    @staticmethod
    def _row(label: str, current: bool, note: str) -> Text:
        return Text.assemble(
            ("✓ " if current else "  ", "bold"), label, (f"  {note}" if note else "", "dim")
        )

    def _effort_options(self, model: ModelChoice) -> list[Option]:
        current = self.current.effort if self.current.model == model else None
        options = [Option(self._row(_("Server default effort"), current is None, ""), id=_DEFAULT)]
        for effort in EFFORTS:
            options.append(
                Option(self._row(_(EFFORT_NAMES[effort]), effort == current, ""), id=effort)
            )
        return options

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id or _DEFAULT
        if self._model is not None:  # the second step: the effort
            effort = next((e for e in EFFORTS if e == chosen), None)
            self.dismiss(ModelPick(self._model, effort))
            return
        model = next((m for m in self.models.models if m.id == chosen), None)
        if model is None or not model.reasoning:
            self.dismiss(ModelPick(model))
            return
        self._model = model
        self.query_one("#model-picker-title", Static).update(
            Text(_("Reasoning effort of {name}").format(name=model_label(model)))
        )
        options = event.option_list
        options.clear_options()
        options.add_options(self._effort_options(model))
        options.highlighted = 0
