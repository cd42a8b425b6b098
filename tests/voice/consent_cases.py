"""The §10.4 utterance table: what each final transcript means for a pending action.

Each row is (transcript, expected outcome, expected reason[, keyword, session words]).
"""

from __future__ import annotations

from typing import NamedTuple

from talkie_tui.voice.consent_classifier import ConsentWords, Reason, VerdictOutcome


class Case(NamedTuple):
    text: str
    outcome: VerdictOutcome
    reason: Reason
    keyword: str | None = None
    extra: ConsentWords | None = None


SESSION = ConsentWords(confirm=("schvaluji", "dej tomu zelenou"), refuse=("zamítnout", "veto"))
# Session words cannot weaken a guard: "možná" stays a hesitation, "ne" stays a refusal.
HOSTILE_SESSION = ConsentWords(confirm=("možná", "ne", "what"), refuse=("ano",))

CASES: list[Case] = [
    # --- plain confirmations, Czech ---------------------------------------------------------
    Case("ano", "confirm", "confirmed"),
    Case("Ano.", "confirm", "confirmed"),
    Case("ANO!", "confirm", "confirmed"),
    Case("ano, ano", "confirm", "confirmed"),
    Case("Ano…", "confirm", "confirmed"),
    Case("jo", "confirm", "confirmed"),
    Case("jo jo", "confirm", "confirmed"),
    Case("jj", "confirm", "confirmed"),
    Case("tak jo", "confirm", "confirmed"),
    Case("potvrzuji", "confirm", "confirmed"),
    Case("potvrzuju", "confirm", "confirmed"),
    Case("Potvrzuji to.", "confirm", "confirmed"),
    Case("souhlasím", "confirm", "confirmed"),
    Case("souhlasim", "confirm", "confirmed"),  # STT dropped the diacritics
    Case("SOUHLASÍM", "confirm", "confirmed"),
    Case("ano, souhlasím", "confirm", "confirmed"),
    Case("dobře", "confirm", "confirmed"),
    Case("dobre", "confirm", "confirmed"),
    Case("jasně", "confirm", "confirmed"),
    Case("určitě ano", "confirm", "confirmed"),
    Case("okej", "confirm", "confirmed"),
    Case("do toho", "confirm", "confirmed"),
    Case("pokračuj", "confirm", "confirmed"),
    Case("v pořádku", "confirm", "confirmed"),
    Case("Ano 🙂", "confirm", "confirmed"),  # emoji are ignored, not words
    # --- polite forms: politeness is not a condition -----------------------------------------
    Case("ano prosím", "confirm", "confirmed"),
    Case("ano, díky", "confirm", "confirmed"),
    Case("ano, pošli to", "confirm", "confirmed"),
    Case("pošli to", "confirm", "confirmed"),
    Case("Ano, pošli to hned teď prosím", "confirm", "confirmed"),  # exactly six words
    Case("yes please", "confirm", "confirmed"),
    Case("yes, thanks", "confirm", "confirmed"),
    Case("Yes I confirm, go ahead please", "confirm", "confirmed"),  # exactly six words
    # --- plain confirmations, English --------------------------------------------------------
    Case("yes", "confirm", "confirmed"),
    Case("Yes.", "confirm", "confirmed"),
    Case("YES!", "confirm", "confirmed"),
    Case("yeah", "confirm", "confirmed"),
    Case("yep", "confirm", "confirmed"),
    Case("ok", "confirm", "confirmed"),
    Case("OK.", "confirm", "confirmed"),
    Case("O.K.", "confirm", "confirmed"),
    Case("okay, send it", "confirm", "confirmed"),
    Case("confirm", "confirm", "confirmed"),
    Case("confirmed", "confirm", "confirmed"),
    Case("go ahead", "confirm", "confirmed"),
    Case("do it", "confirm", "confirmed"),
    Case("just do it", "confirm", "confirmed"),
    Case("sure", "confirm", "confirmed"),
    Case("yes yes yes yes yes yes", "confirm", "confirmed"),  # six words
    Case("yes,yes", "confirm", "confirmed"),
    Case("Yes！", "confirm", "confirmed"),  # full-width punctuation
    # --- too long: a confirm word in a seven-word sentence ------------------------------------
    Case("ano, pošli to hned teď prosím díky", "neither", "too_long"),
    Case("yes yes yes yes yes yes yes", "neither", "too_long"),
    Case("yes I think that would be fine", "neither", "too_long"),
    Case("ano to je přesně to co chci", "neither", "too_long"),
    # --- questions ---------------------------------------------------------------------------
    Case("ano?", "neither", "question"),
    Case("yes?", "neither", "question"),
    Case("Ano？", "neither", "question"),  # full-width question mark
    Case("ok?", "neither", "question"),
    Case("go ahead?", "neither", "question"),
    Case("zrušit?", "neither", "question"),  # asking, not refusing
    Case("ano, ne?", "neither", "question"),
    Case("co to je", "neither", "question"),
    Case("kolik to stojí", "neither", "question"),
    Case("proč ne", "neither", "question"),
    Case("jak to myslíš", "neither", "question"),
    Case("kdy to odejde", "neither", "question"),
    Case("ano, a kdy to dorazí", "neither", "question"),  # question word opens a clause
    Case("what is it", "neither", "question"),
    Case("why not", "neither", "question"),
    Case("is it sent", "neither", "question"),
    Case("can you repeat that", "neither", "question"),
    Case("should I say yes", "neither", "question"),
    Case("does it include VAT", "neither", "question"),
    Case("je-li to tak, ano", "neither", "question"),  # Czech "-li"
    Case("¿yes", "neither", "question"),
    # --- hesitation, fillers, deferral -------------------------------------------------------
    Case("asi ano", "neither", "hesitation"),
    Case("asi", "neither", "hesitation"),
    Case("možná jo", "neither", "hesitation"),
    Case("mozna jo", "neither", "hesitation"),
    Case("snad", "neither", "hesitation"),
    Case("nevím", "neither", "hesitation"),
    Case("hmm ano", "neither", "hesitation"),
    Case("hmmmm, jo", "neither", "hesitation"),
    Case("ehm ano", "neither", "hesitation"),
    Case("eee ano", "neither", "hesitation"),
    Case("ano ale počkej", "neither", "hesitation"),
    Case("počkej", "neither", "hesitation"),
    Case("moment", "neither", "hesitation"),
    Case("ještě ne", "neither", "hesitation"),  # deferral, not a refusal
    Case("ne, teď ne", "neither", "hesitation"),
    Case("myslím že ano", "neither", "hesitation"),
    Case("nejsem si jistý", "neither", "hesitation"),
    Case("um yes", "neither", "hesitation"),
    Case("uh, ok", "neither", "hesitation"),
    Case("i guess yes", "neither", "hesitation"),
    Case("yes, wait", "neither", "hesitation"),
    Case("hold on", "neither", "hesitation"),
    Case("maybe", "neither", "hesitation"),
    Case("probably yes", "neither", "hesitation"),
    Case("I'm not sure", "neither", "hesitation"),
    Case("not yet", "neither", "hesitation"),
    Case("not now", "neither", "hesitation"),
    Case("well, yes", "neither", "hesitation"),
    # --- conditions and change requests ------------------------------------------------------
    Case("ano, ale až zítra", "neither", "condition"),
    Case("yes but only to Novák", "neither", "condition"),
    Case("ano, změň adresu", "neither", "condition"),
    Case("ano, jen bez přílohy", "neither", "condition"),
    Case("yes, if it's under budget", "neither", "condition"),
    Case("ok, change the date", "neither", "condition"),
    Case("no, the other one", "neither", "condition"),
    Case("ne, tu druhou", "neither", "condition"),
    Case("ano nebo ne", "neither", "condition"),
    # --- contradictions ----------------------------------------------------------------------
    Case("ne, ano", "neither", "conflict"),
    Case("no yes", "neither", "conflict"),
    Case("yes, no", "neither", "conflict"),
    Case("ne, potvrzuji", "neither", "conflict"),
    Case("no, do it", "neither", "conflict"),
    Case("no jo", "neither", "conflict"),  # Czech colloquial "well yes" meets English "no"
    Case("rozhodně ne", "neither", "conflict"),
    # --- refusals ----------------------------------------------------------------------------
    Case("ne", "cancel", "refusal"),
    Case("Ne.", "cancel", "refusal"),
    Case("ne ne ne", "cancel", "refusal"),
    Case("ne-e", "cancel", "refusal"),
    Case("ne, díky", "cancel", "refusal"),
    Case("zruš to", "cancel", "refusal"),
    Case("zrus to", "cancel", "refusal"),  # STT dropped the diacritics
    Case("Zrušit.", "cancel", "refusal"),
    Case("storno", "cancel", "refusal"),
    Case("nechci", "cancel", "refusal"),
    Case("nechci to posílat", "cancel", "refusal"),
    Case("nepotvrzuji", "cancel", "refusal"),  # negated Czech verb
    Case("nepotvrzuju", "cancel", "refusal"),
    Case("nesouhlasím", "cancel", "refusal"),
    Case("neposílej to", "cancel", "refusal"),
    Case("neposilej to", "cancel", "refusal"),
    Case("nedělej to", "cancel", "refusal"),
    Case("nemaž to", "cancel", "refusal"),  # "ne-" + a verb of the action, by rule
    Case("nikoliv", "cancel", "refusal"),
    Case("ani náhodou", "cancel", "refusal"),
    Case("v zadnem pripade", "cancel", "refusal"),
    Case("no", "cancel", "refusal"),
    Case("No, thank you.", "cancel", "refusal"),
    Case("nope", "cancel", "refusal"),
    Case("cancel", "cancel", "refusal"),
    Case("cancel it please", "cancel", "refusal"),
    Case("stop", "cancel", "refusal"),
    Case("don't", "cancel", "refusal"),
    Case("don’t do it", "cancel", "refusal"),  # typographic apostrophe
    Case("dont send it", "cancel", "refusal"),
    Case("do not send it", "cancel", "refusal"),
    Case("I do not confirm", "cancel", "refusal"),
    Case("I don't want to do it", "cancel", "refusal"),
    Case("not ok", "cancel", "refusal"),
    Case("not at all", "cancel", "refusal"),
    Case("never mind", "cancel", "refusal"),
    Case("forget it", "cancel", "refusal"),
    # --- negation without an explicit refusal ------------------------------------------------
    Case("not that one", "neither", "negation"),
    Case("definitely not", "neither", "negation"),
    Case("ano, to nevadí", "neither", "negation"),
    Case("that's not what I said", "neither", "negation"),
    # --- set phrases whose negation negates nothing ------------------------------------------
    Case("no problem", "neither", "no_confirm_word"),
    Case("yes, no problem", "confirm", "confirmed"),
    Case("no worries, go ahead", "confirm", "confirmed"),
    Case("ano, bez problému", "confirm", "confirmed"),
    Case("no, no problem", "cancel", "refusal"),
    # --- ordinary conversation, empty input and garbage --------------------------------------
    Case("díky", "neither", "no_confirm_word"),
    Case("thank you", "neither", "no_confirm_word"),
    Case("zopakuj to", "neither", "no_confirm_word"),
    Case("uh-huh", "neither", "no_confirm_word"),
    Case("asdf qwer zxcv", "neither", "no_confirm_word"),
    Case("12345", "neither", "no_confirm_word"),
    Case("", "neither", "empty"),
    Case("   \t\n ", "neither", "empty"),
    Case("...", "neither", "empty"),
    Case("👍👍", "neither", "empty"),
    Case("\x1b[2J\x00", "neither", "no_confirm_word"),  # control bytes leave a stray "2j"
    Case("@@@ ### !!!", "neither", "empty"),
    # --- the action's voice keyword ----------------------------------------------------------
    Case("ano", "neither", "keyword_missing", keyword="odeslat"),
    Case("yes, go ahead", "neither", "keyword_missing", keyword="odeslat"),
    Case("ano odeslat", "confirm", "confirmed", keyword="odeslat"),
    Case("ano, odeslat", "confirm", "confirmed", keyword="odeslat"),
    Case("odeslat", "confirm", "confirmed", keyword="odeslat"),  # the keyword confirms alone
    Case("Odeslat!", "confirm", "confirmed", keyword="odeslat"),
    Case("ano odešli", "confirm", "confirmed", keyword="odešli"),
    Case("ano odesli", "confirm", "confirmed", keyword="odešli"),  # keyword without accents
    Case("ano odešli", "confirm", "confirmed", keyword="odesli"),  # keyword lost its accents
    Case("ano odeslat", "confirm", "confirmed", keyword="  Odeslat "),
    Case("odeslat?", "neither", "question", keyword="odeslat"),
    Case("asi odeslat", "neither", "hesitation", keyword="odeslat"),
    Case("neodeslat", "cancel", "refusal", keyword="odeslat"),  # "ne-" + the keyword
    Case("ne, odeslat", "neither", "conflict", keyword="odeslat"),
    Case("don't odeslat", "cancel", "refusal", keyword="odeslat"),
    Case("ano, odeslatelné", "neither", "keyword_missing", keyword="odeslat"),  # whole words only
    Case("ano, odeslat nabídku", "confirm", "confirmed", keyword="odeslat nabídku"),
    Case("ano, odeslat", "neither", "keyword_missing", keyword="odeslat nabídku"),
    Case("ne", "cancel", "refusal", keyword="odeslat"),  # refusing needs no keyword
    Case("ano", "confirm", "confirmed", keyword="   "),  # a blank keyword is no keyword
    Case("ano", "neither", "keyword_missing", keyword="👍"),  # one that cannot be said blocks
    # --- session consent words (§10.1) -------------------------------------------------------
    Case("schvaluji", "neither", "no_confirm_word"),
    Case("schvaluji", "confirm", "confirmed", extra=SESSION),
    Case("dej tomu zelenou", "confirm", "confirmed", extra=SESSION),
    Case("zamítnout", "cancel", "refusal", extra=SESSION),
    Case("zamitnout", "cancel", "refusal", extra=SESSION),
    Case("veto", "neither", "no_confirm_word"),
    Case("veto", "cancel", "refusal", extra=SESSION),
    Case("neschvaluji", "cancel", "refusal", extra=SESSION),  # "ne-" + a session confirm word
    Case("ano", "confirm", "confirmed", extra=SESSION),  # built-ins still apply
    Case("schvaluji?", "neither", "question", extra=SESSION),
    Case("možná", "neither", "hesitation", extra=HOSTILE_SESSION),
    Case("ne", "neither", "conflict", extra=HOSTILE_SESSION),
    Case("what", "neither", "question", extra=HOSTILE_SESSION),
    Case("ano", "neither", "conflict", extra=HOSTILE_SESSION),
]
