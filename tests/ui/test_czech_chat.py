"""The chat screen's own words in Czech: the voice bar, consent explanations and counts.

The words to say in a consent window follow the call's language; the sentences around them
follow the UI's. Czech counts take three forms (1, 2–4, 5 and more).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from talkie_tui.i18n import use_language
from talkie_tui.ui.chat.voice import consent_phrase, describe_heard
from talkie_tui.ui.widgets.composer import _grouped
from talkie_tui.ui.widgets.voice_bar import format_left
from talkie_tui.voice.consent import Heard
from talkie_tui.voice.consent_classifier import Verdict
from tests.ui.apps.voice_app import fixed_bar


@pytest.fixture(autouse=True)
def _czech() -> Iterator[None]:
    use_language("cs")
    yield
    use_language("en")


def test_time_left_takes_the_czech_plural_of_the_verb() -> None:
    assert format_left(840) == "zbývá 14 min"
    assert format_left(120) == "zbývají 2 min"
    assert format_left(59.2) == "zbývá 1 min"
    assert format_left(3) == "zbývají 3 s"
    assert format_left(-3) == "zbývá 0 s"


def test_the_voice_bar_speaks_czech_around_the_call_s_words() -> None:
    listening = fixed_bar("listening", level=0.0).plain
    assert listening.startswith("○ Poslouchám  ")
    assert "01:23 · zbývá 14 min · mluvení tlačítkem" in listening
    assert listening.endswith("F6 mluvit · F7 handsfree · F5 zavěsit")
    consent = fixed_bar("consent", level=0.0).plain
    assert consent.startswith("⚑ Pro potvrzení řekněte „ano, odeslat“ · 12 s  ")
    assert consent.endswith("F6 mluvit · „ne“ zruší · y/n na kartě · F5 zavěsit")


def test_consent_words_follow_the_call_not_the_ui() -> None:
    yes, no = consent_phrase(None, "en-US")
    assert (yes, no) == ("yes", "no")
    bar = fixed_bar("consent", level=0.0)
    bar.consent_words = (yes, no)
    assert bar.state_text().startswith("Pro potvrzení řekněte „yes“")


def test_why_an_utterance_did_not_count() -> None:
    hesitation = Heard("item_1", "asi ano", 0.0, Verdict("neither", "hesitation"), None)
    assert describe_heard(hesitation) == "Slyšeno „asi ano“: není to potvrzení (váhání)"
    late = Heard("item_2", "ano", 0.0, None, "not_in_window")
    assert describe_heard(late) == (
        "Slyšeno „ano“: nepočítá se (řečeno, zatímco asistent ještě mluvil)"
    )


def test_character_counts_group_thousands_with_a_no_break_space() -> None:
    assert _grouped(12345) == "12\u00a0345"
    use_language("en")
    assert _grouped(12345) == "12,345"
