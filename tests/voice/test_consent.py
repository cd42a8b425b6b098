"""§10.4 voice consent: the utterance classifier (table-driven) and the window state machine."""

from __future__ import annotations

import random

import pytest

from talkie_tui.voice import consent_classifier
from talkie_tui.voice.consent import ConsentWindow, Decision
from talkie_tui.voice.consent_classifier import (
    CONFIRM_WORDS,
    HESITATION_WORDS,
    MAX_CHARS,
    MAX_WORDS,
    REFUSE_WORDS,
    ConsentWords,
    Verdict,
    classify,
)
from tests.voice.consent_cases import CASES, Case

# --- the classifier -------------------------------------------------------------------------


def case_id(case: Case) -> str:
    suffix = f" [kw={case.keyword.strip()}]" if case.keyword and case.keyword.strip() else ""
    suffix += " [session]" if case.extra is not None else ""
    return f"{case.text!r}{suffix}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_utterance_table(case: Case) -> None:
    """Each transcript of the table gets its outcome and the reason the UI shows."""
    verdict = classify(case.text, keyword=case.keyword, extra=case.extra)
    assert (verdict.outcome, verdict.reason) == (case.outcome, case.reason), verdict


def test_table_is_big_and_covers_every_outcome() -> None:
    """The table keeps at least 120 rows, with each outcome well represented."""
    assert len(CASES) >= 120
    for outcome in ("confirm", "cancel", "neither"):
        assert sum(case.outcome == outcome for case in CASES) >= 30


def test_cue_names_the_deciding_words() -> None:
    """The cue is the (folded) word that decided, so the UI can say why."""
    assert classify("asi ano") == Verdict("neither", "hesitation", "asi")
    assert classify("Počkej, ano") == Verdict("neither", "hesitation", "pockej")
    assert classify("ano?").cue == "?"
    assert classify("co to je").cue == "co"
    assert classify("ne, ano").cue == "ne / ano"
    assert classify("not ok").cue == "not ok"
    assert classify("ano", keyword="Odeslat").cue == "odeslat"
    assert classify("Ano, pošli to") == Verdict("confirm", "confirmed", "ano")


def test_every_builtin_confirm_word_confirms_alone_and_never_with_a_guard() -> None:
    """Each built-in confirm phrase confirms alone; "?", a hesitation or a "ne" spoils it."""
    for phrase in CONFIRM_WORDS:
        assert classify(phrase).outcome == "confirm", phrase
        assert classify(f"{phrase}?").reason == "question", phrase
        assert classify(f"asi {phrase}").reason == "hesitation", phrase
        assert classify(f"ne, {phrase}").outcome == "neither", phrase


def test_every_builtin_refuse_word_cancels_alone() -> None:
    """Each built-in refuse phrase cancels alone, and a question about it decides nothing."""
    for phrase in REFUSE_WORDS:
        assert classify(phrase).outcome == "cancel", phrase
        assert classify(f"{phrase}?").outcome == "neither", phrase


def test_every_hesitation_blocks_a_yes() -> None:
    """No hesitation phrase, before or after a yes, lets the yes through."""
    for phrase in HESITATION_WORDS:
        assert classify(f"ano {phrase}").outcome == "neither", phrase
        assert classify(f"{phrase}, yes").outcome == "neither", phrase


def test_session_words_from_the_wire() -> None:
    """§10.1 `consent`: lists of strings are taken; anything else is dropped, never raised."""
    words = ConsentWords.from_wire({"confirm": ["schvaluji", 7, None, ""], "refuse": ["veto"]})
    assert words == ConsentWords(confirm=("schvaluji",), refuse=("veto",))
    assert ConsentWords.from_wire(None) == ConsentWords()
    assert ConsentWords.from_wire(["ano"]) == ConsentWords()
    assert ConsentWords.from_wire({"confirm": "ano", "refuse": {"x": 1}}) == ConsentWords()
    many = ConsentWords.from_wire({"confirm": [f"w{i}" for i in range(10_000)] + ["x" * 10_000]})
    assert len(many.confirm) == 64
    assert classify("schvaluji", extra=words).outcome == "confirm"


def test_session_words_given_as_lists_are_still_usable() -> None:
    """A caller passing lists instead of tuples gets a hashable, working word set."""
    words = ConsentWords(confirm=["schvaluji"], refuse=["veto"])  # type: ignore[arg-type]
    assert classify("veto", extra=words).outcome == "cancel"


ALPHABET = [
    *sorted(CONFIRM_WORDS)[:20],
    *sorted(REFUSE_WORDS)[:15],
    *sorted(HESITATION_WORDS)[:15],
    "co",
    "what",
    "ale",
    "not",
    "ne",
    "odeslat",
    "?",
    ",",
    ".",
    "!",
    "-",
    "'",
    "—",
    "😀",
    "\u0301",
    "\x00",
    "\u200b",
    "ß",
    "İ",
    "ǅ",
    "Ⅻ",
    "١٢",
    "漢字",
    "-li",
]


def test_random_utterances_never_crash_and_keep_the_invariants() -> None:
    """A seeded property loop: any string classifies, and a confirm obeys §10.4's conditions."""
    rng = random.Random(20261022)
    for _ in range(3000):
        parts = [rng.choice(ALPHABET) for _ in range(rng.randint(0, 9))]
        text = rng.choice(["", " ", "  "]).join(parts)
        keyword = rng.choice([None, "odeslat"])
        verdict = classify(text, keyword=keyword)
        assert verdict.outcome in ("confirm", "cancel", "neither")
        if verdict.outcome == "neither":
            continue
        # Decisive sentences are short and are not questions; a confirm holds the keyword.
        assert "?" not in text
        assert classify(text + "?", keyword=keyword).reason == "question"
        assert classify("možná " + text, keyword=keyword).outcome == "neither"
        assert classify(" ".join([text] + ["slovo"] * MAX_WORDS), keyword=keyword).outcome == (
            "neither"
        )
        if verdict.outcome == "confirm":
            assert classify("ne, " + text, keyword=keyword).outcome != "confirm"
            assert classify("don't " + text, keyword=keyword).outcome != "confirm"
            if keyword is not None:
                assert "odeslat" in text.casefold()


HUGE_INPUTS = {
    "many-words": "ano " * 500_000,
    "one-huge-word": "a" * 2_000_000,
    "huge-whitespace": "ano" + " " * 2_000_000,
    "emoji-flood": "😀" * 1_000_000 + " ano",
    "commas": "ano, " * 400_000,
    "accents": "ř" * 1_000_000,
    "czech-li": "je-li" * 400_000,
    "dashes": "-" * 1_000_000,
}


@pytest.mark.parametrize("text", HUGE_INPUTS.values(), ids=HUGE_INPUTS.keys())
def test_very_long_input_is_too_long_and_fast(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Megabytes of transcript are `too_long` at once, never a decision: decided by the length
    alone, before any word of the text is looked at (the time per call is a figure of
    benchmarks/text_cost.py)."""

    def read(_text: str) -> str:
        raise AssertionError("the text was read")

    monkeypatch.setattr(consent_classifier, "_prepare", read)
    assert classify(text, keyword="odeslat") == Verdict("neither", "too_long")


@pytest.mark.parametrize("text", HUGE_INPUTS.values(), ids=HUGE_INPUTS.keys())
def test_every_regex_stays_linear_without_the_caps(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every regex stays linear (a long word once made one quadratic): with the caps lifted, a
    megabyte is classified. A quadratic step would take hours on it, so it never ends within
    the run's timeout (`timeout` in pyproject.toml), where just under the real cap it only costs
    milliseconds, too few to tell from a busy machine; benchmarks/text_cost.py prints them."""
    utterance = text + " ano"
    monkeypatch.setattr(consent_classifier, "MAX_CHARS", len(utterance))
    monkeypatch.setattr(consent_classifier, "MAX_WORDS", len(utterance))
    verdict = classify(utterance, keyword=None)
    assert verdict.outcome in ("neither", "confirm") and verdict.reason != "too_long"


@pytest.mark.parametrize(
    "text", [t[: MAX_CHARS - 4] + " ano" for t in HUGE_INPUTS.values()], ids=HUGE_INPUTS.keys()
)
def test_input_just_under_the_character_cap_is_classified(text: str) -> None:
    """Just under the cap the text is read, not refused as too long."""
    verdict = classify(text, keyword=None)
    assert verdict.outcome in ("neither", "confirm")  # one huge "word" + "ano" is two words
    assert verdict.reason != "too_long" or text.count(" ") > MAX_WORDS


# --- the window -----------------------------------------------------------------------------


def opened(window: ConsentWindow | None = None, at: float = 10.0) -> ConsentWindow:
    """A window after the assistant read the proposal and local playback drained."""
    window = window or ConsentWindow("a_77")
    window.assistant_started_speaking(at - 5)
    window.assistant_stopped(at - 0.5)
    assert window.playback_drained(at)
    assert window.state == "open"
    return window


def state(window: ConsentWindow) -> str:
    """The window's state, read afresh (mypy would otherwise keep an earlier assert's narrowing)."""
    return window.state


def say(window: ConsentWindow, item_id: str, text: str, at: float) -> Decision | None:
    """A user utterance inside the window: speech starts, then the final transcript."""
    window.user_speech_started(at, item_id)
    return window.final_transcript(item_id, text, at + 1)


def test_window_waits_for_the_assistant_then_for_playback() -> None:
    """§10.4 step 2 + notes §1.6: assistant stopped, then local playback drained, opens it."""
    window = ConsentWindow("a_77")
    assert window.state == "waiting_for_assistant"
    window.assistant_started_speaking(1.0)
    assert state(window) == "waiting_for_assistant"
    assert window.assistant_stopped(4.0) is False
    assert (state(window), window.opened_at) == ("waiting_for_playback", None)
    assert window.playback_drained(4.3) is True
    assert (window.state, window.opened_at) == ("open", 4.3)


def test_window_opens_when_the_stop_comes_after_the_drain() -> None:
    """Either order: a drain after the assistant started, then the server's stop, opens it."""
    window = ConsentWindow("a_77")
    window.assistant_started_speaking(1.0)
    assert window.playback_drained(3.9) is False
    assert window.state == "waiting_for_assistant"
    assert window.assistant_stopped(4.0) is True
    assert (window.state, window.opened_at) == ("open", 4.0)


def test_a_drain_before_the_assistant_spoke_does_not_count() -> None:
    """An empty player before the proposal is read says nothing about its playback."""
    window = ConsentWindow("a_77")
    window.playback_drained(0.5)
    window.assistant_started_speaking(1.0)
    assert window.assistant_stopped(4.0) is False
    assert window.state == "waiting_for_playback"
    assert window.playback_drained(4.2) is True


def test_playback_resuming_cancels_an_earlier_drain() -> None:
    """A drain followed by more audio (a jitter gap) must be drained again."""
    window = ConsentWindow("a_77")
    window.assistant_started_speaking(1.0)
    window.playback_drained(2.0)
    window.playback_started(2.1)
    assert window.assistant_stopped(4.0) is False
    assert window.state == "waiting_for_playback"
    assert window.playback_drained(4.4) is True


def test_a_stop_without_a_start_is_a_leftover_and_ignored() -> None:
    """A stop from an earlier response must not open the window before the proposal is read."""
    window = ConsentWindow("a_77")
    window.playback_drained(0.1)
    assert window.assistant_stopped(0.2) is False
    assert window.state == "waiting_for_assistant"


def test_a_response_without_audio_opens_after_the_drain() -> None:
    """`response.done` without audio stands in for the stop; the drain is still needed."""
    window = ConsentWindow("a_77")
    assert window.response_done_without_audio(2.0) is False
    assert window.state == "waiting_for_playback"
    assert window.playback_drained(2.1) is True
    assert window.opened_at == 2.1

    drained_first = ConsentWindow("a_78")
    drained_first.playback_drained(1.0)
    assert drained_first.response_done_without_audio(2.0) is True
    assert drained_first.state == "open"


def test_a_response_without_audio_does_not_cut_the_assistant_short() -> None:
    """While the assistant's audio plays, a silent response.done does not open the window."""
    window = ConsentWindow("a_77")
    window.assistant_started_speaking(1.0)
    assert window.response_done_without_audio(1.5) is False
    window.playback_drained(1.6)
    assert window.state == "waiting_for_assistant"
    assert window.assistant_stopped(3.0) is True


def test_speech_begun_before_the_window_opened_never_counts() -> None:
    """§10.4 step 2: an early "ano" never counts, even when its transcript arrives later."""
    window = ConsentWindow("a_77")
    window.assistant_started_speaking(1.0)
    window.user_speech_started(3.0, "item_early")  # the person talked over the assistant
    window.assistant_stopped(4.0)
    window.user_speech_started(4.1, "item_gap")  # during the playback tail
    window.playback_drained(4.5)
    window.user_speech_started(4.6, "item_early")  # a repeated report must not upgrade it

    assert window.final_transcript("item_early", "ano", 5.0) is None
    assert window.last_heard is not None
    assert window.last_heard.ignored == "not_in_window"
    assert window.final_transcript("item_gap", "ano potvrzuji", 5.1) is None
    assert (window.state, window.non_decisive_count, window.decision) == ("open", 0, None)

    decision = say(window, "item_late", "ano", 6.0)
    assert decision == Decision("a_77", "confirm", "voice", "ano")


def test_a_late_report_of_speech_that_started_before_opening_does_not_count() -> None:
    """Eligibility is judged by when the speech started, not when the event arrived."""
    window = opened(at=10.0)
    window.user_speech_started(9.5, "item_1")
    assert window.final_transcript("item_1", "ano", 10.5) is None
    assert window.last_heard is not None and window.last_heard.ignored == "not_in_window"


def test_a_transcript_for_an_unknown_item_is_ignored() -> None:
    """No speech_started seen: nothing proves it began in the window, so it never counts."""
    window = opened()
    assert window.final_transcript("item_ghost", "ano", 11.0) is None
    assert window.last_heard is not None and window.last_heard.ignored == "unknown_item"
    assert (window.state, window.non_decisive_count) == ("open", 0)
    # A start reported after its own transcript does not revive it either.
    window.user_speech_started(11.5, "item_ghost")
    assert window.final_transcript("item_ghost", "ano", 12.0) is None
    assert window.decision is None


def test_the_window_closes_before_the_decision_is_returned() -> None:
    """§10.4 step 4: the window is closed when the caller gets the decision."""
    window = opened()
    decision = say(window, "item_1", "Ano, potvrzuji.", 11.0)
    assert decision == Decision("a_77", "confirm", "voice", "Ano, potvrzuji.")
    assert (window.state, window.closed_reason, window.decision) == ("closed", "decided", decision)


def test_a_duplicated_final_transcript_decides_once() -> None:
    """The same transcript twice (same item, or same text under a new item) decides once."""
    window = opened()
    assert say(window, "item_1", "ano", 11.0) is not None
    assert window.final_transcript("item_1", "ano", 12.5) is None
    assert say(window, "item_2", "ano", 13.0) is None
    assert window.last_heard is not None and window.last_heard.ignored == "closed"
    assert window.button_pressed("cancel") is None


def test_a_duplicated_non_decisive_transcript_counts_once() -> None:
    """A repeated delivery of one "hmm" is one utterance, not two."""
    window = opened()
    assert say(window, "item_1", "hmm", 11.0) is None
    assert window.final_transcript("item_1", "hmm", 12.1) is None
    assert window.last_heard is not None and window.last_heard.ignored == "duplicate"
    assert (window.state, window.non_decisive_count) == ("open", 1)


def test_a_refusal_cancels() -> None:
    """An explicit refusal in the window is a voice cancel."""
    window = opened()
    assert say(window, "item_1", "Ne, zruš to.", 11.0) == Decision(
        "a_77", "cancel", "voice", "Ne, zruš to."
    )


def test_two_non_decisive_utterances_close_the_window() -> None:
    """§10.4 step 3: after two ordinary utterances voice stops; the button still decides."""
    window = opened()
    assert say(window, "item_1", "asi ano", 11.0) is None
    assert window.last_heard is not None
    assert window.last_heard.verdict == Verdict("neither", "hesitation", "asi")
    assert (window.state, window.non_decisive_count) == ("open", 1)
    assert say(window, "item_2", "co to je", 13.0) is None
    assert (window.state, window.closed_reason, window.non_decisive_count) == (
        "closed",
        "non_decisive",
        2,
    )
    assert say(window, "item_3", "ano", 15.0) is None
    assert window.decision is None
    assert window.button_pressed("confirm") == Decision("a_77", "confirm", "button", None)
    assert window.closed_reason == "non_decisive"  # why voice stopped stays visible


def test_noise_does_not_use_up_an_utterance() -> None:
    """An empty transcript (VAD heard a cough) is not a non-decisive utterance."""
    window = opened()
    assert say(window, "item_1", "", 11.0) is None
    assert say(window, "item_2", " 🙂 ", 12.0) is None
    assert window.last_heard is not None and window.last_heard.ignored == "empty"
    assert (window.state, window.non_decisive_count) == ("open", 0)
    assert say(window, "item_3", "jo", 13.0) is not None


def test_the_keyword_is_required_in_the_window() -> None:
    """The action's voice keyword: "ano" alone is not enough, "ano odeslat" is."""
    window = opened(ConsentWindow("a_77", keyword="odeslat"))
    assert say(window, "item_1", "ano", 11.0) is None
    assert window.last_heard is not None and window.last_heard.verdict is not None
    assert window.last_heard.verdict.reason == "keyword_missing"
    assert say(window, "item_2", "ano, odeslát", 12.0) == Decision(
        "a_77", "confirm", "voice", "ano, odeslát"
    )


def test_session_words_reach_the_window() -> None:
    """The session's consent words extend the window's vocabulary."""
    words = ConsentWords.from_wire({"confirm": ["schvaluji"], "refuse": []})
    window = opened(ConsentWindow("a_77", extra=words))
    assert say(window, "item_1", "Schvaluji.", 11.0) is not None


def test_button_first_then_utterance_gives_one_decision() -> None:
    """A button press wins the race; the utterance that follows is ignored."""
    window = opened()
    window.user_speech_started(11.0, "item_1")
    assert window.button_pressed("cancel") == Decision("a_77", "cancel", "button", None)
    assert window.final_transcript("item_1", "ano", 11.8) is None
    assert window.decision == Decision("a_77", "cancel", "button", None)


def test_utterance_first_then_button_gives_one_decision() -> None:
    """A decisive utterance wins the race; the button press that follows loses."""
    window = opened()
    decision = say(window, "item_1", "ano", 11.0)
    assert decision is not None
    assert window.button_pressed("cancel") is None
    assert window.button_pressed("confirm") is None
    assert window.decision == decision


def test_the_button_works_before_the_window_opens() -> None:
    """A person may press the button while the assistant is still reading."""
    window = ConsentWindow("a_77")
    window.assistant_started_speaking(1.0)
    assert window.button_pressed("confirm") is not None
    assert window.state == "closed"
    window.assistant_stopped(3.0)
    assert window.playback_drained(3.1) is False


def test_timeout_closes_the_open_window() -> None:
    """After `timeout` seconds of silence the window closes; the button still decides."""
    window = opened(ConsentWindow("a_77", timeout=15.0), at=10.0)
    assert (state(window), window.deadline) == ("open", 25.0)
    assert window.tick(24.9) is False
    assert window.tick(25.0) is True
    assert (state(window), window.closed_reason, window.deadline) == ("closed", "timeout", None)
    assert window.tick(40.0) is False
    assert say(window, "item_1", "ano", 26.0) is None
    assert window.button_pressed("confirm") is not None


def test_speech_postpones_the_timeout_until_its_transcript_can_arrive() -> None:
    """Speech starting just before the deadline keeps the window open for its transcript."""
    window = opened(ConsentWindow("a_77", timeout=15.0), at=10.0)
    window.user_speech_started(24.0, "item_1")
    assert window.deadline == 39.0
    assert window.tick(26.0) is False
    assert window.final_transcript("item_1", "ano", 26.5) is not None


def test_no_timeout_while_waiting_and_none_when_disabled() -> None:
    """The timer runs only while the window is open, and `timeout=None` switches it off."""
    waiting = ConsentWindow("a_77", timeout=1.0)
    assert waiting.tick(1_000.0) is False
    assert waiting.state == "waiting_for_assistant"

    forever = opened(ConsentWindow("a_78", timeout=None))
    assert forever.deadline is None
    assert forever.tick(1e9) is False
    assert forever.state == "open"


def test_the_assistant_speaking_again_pauses_the_window() -> None:
    """Nothing said over the assistant counts; the window reopens after stop + drain."""
    window = opened(at=10.0)
    assert say(window, "item_1", "kolik to stojí?", 11.0) is None
    window.user_speech_started(13.0, "item_2")  # started in the window…
    window.assistant_started_speaking(13.5)  # …then the assistant answers the question
    assert (window.state, window.deadline) == ("waiting_for_assistant", None)
    window.user_speech_started(14.0, "item_3")  # over the assistant: never counts
    assert window.final_transcript("item_3", "ano", 14.5) is None
    assert window.last_heard is not None and window.last_heard.ignored == "not_in_window"
    assert window.tick(1_000.0) is False

    window.assistant_stopped(18.0)
    assert window.playback_drained(18.2) is True
    assert (window.opened_at, window.non_decisive_count, window.deadline) == (18.2, 1, 33.2)
    # item_2 began inside the window, so it still decides when its transcript arrives.
    assert window.final_transcript("item_2", "ano", 18.5) == Decision(
        "a_77", "confirm", "voice", "ano"
    )


def test_a_counted_item_may_decide_while_the_window_is_paused() -> None:
    """An utterance begun in the open window is not lost because the assistant spoke again."""
    window = opened(at=10.0)
    window.user_speech_started(11.0, "item_1")
    window.assistant_started_speaking(11.2)
    assert window.final_transcript("item_1", "ne", 11.9) == Decision(
        "a_77", "cancel", "voice", "ne"
    )


def test_voice_is_off_when_the_action_does_not_allow_it() -> None:
    """§10.4: only for actions whose confirm.methods includes voice; the button still works."""
    window = ConsentWindow("a_77", methods=["button"])
    assert (window.state, window.closed_reason) == ("closed", "voice_not_allowed")
    window.assistant_started_speaking(1.0)
    window.assistant_stopped(2.0)
    assert window.playback_drained(2.1) is False
    assert say(window, "item_1", "ano", 3.0) is None
    assert window.button_pressed("confirm") == Decision("a_77", "confirm", "button", None)


def test_close_stops_listening_but_keeps_the_button() -> None:
    """An aborted window (call ended) ignores speech; a button press still decides once."""
    window = opened()
    window.user_speech_started(11.0, "item_1")
    window.close()
    assert (window.state, window.closed_reason) == ("closed", "aborted")
    assert window.final_transcript("item_1", "ano", 11.5) is None
    assert window.button_pressed("cancel") is not None
    assert window.button_pressed("confirm") is None


def test_repr_shows_the_action_and_state() -> None:
    """The repr is short and useful in logs."""
    assert repr(ConsentWindow("a_77")) == "ConsentWindow('a_77', state='waiting_for_assistant')"


@pytest.mark.parametrize(
    ("text", "keyword", "outcome"),
    [
        ("Yes, send it.", "send", "confirm"),
        ("send it", "send", "confirm"),
        ("yes", "send", "neither"),
        ("don't send it", "send", "cancel"),
        ("go ahead", "ahead", "confirm"),
    ],
)
def test_the_keyword_counts_inside_a_longer_confirm_phrase(
    text: str, keyword: str, outcome: str
) -> None:
    """§10.4 keyword: "send it" is one confirm phrase, and it contains the keyword "send"."""
    assert classify(text, keyword=keyword).outcome == outcome
