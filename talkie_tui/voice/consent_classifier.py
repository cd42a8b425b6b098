"""The §10.4 voice-consent classifier: is a final transcript confirm, cancel or neither? Pure.

The classifier is deliberately conservative. Confirming voice is a convenience, and a wrongly
heard "yes" performs an operation, while a wrongly ignored one only costs another sentence or a
key press. So anything ambiguous is `neither`: the action stays pending and the conversation goes
on. A cancel is also irreversible (the opposite decision is a `409`), so contradictory sentences
("ne, ano", "no yes") are `neither` too, not `cancel`.

Rules where §10.4 is silent (the tests pin each one):

- Words compare case-folded and accent-folded ("zrus" == "zruš"); apostrophes vanish ("don't" ==
  "dont"); a hyphen inside a word joins it ("ne-e" == "nee"); other punctuation only splits
  clauses. A "?" anywhere, a question word opening a clause, or a Czech "-li" makes a question.
- Besides the spec's negation, question and hesitation, two more guards keep `confirm` honest:
  a condition or change request ("ale", "but", "jen", "only", "change", "instead", "nebo"…) means
  the person wants something other than the proposal as read, and both languages' negations count
  (Czech verbs negated by the "ne-" prefix: "nepotvrzuji", "neposílej"). Session words
  (`ConsentWords`) can add confirm and refuse words but never weaken these guards: a session word
  that is also a built-in hesitation, negation or opposite word simply cannot decide.
- An explicit refusal is a refuse word in a sentence of at most six words with no question,
  hesitation, condition or confirm word: "ne" and "neposílej to" cancel; "ne, ano", "no yes" and
  "ne, potvrzuji" are contradictions (`conflict`, `neither`); "ještě ne"/"not yet" is a deferral
  (`hesitation`, `neither`), because a person who wants to wait has not refused.
- English negators ("not", "don't", "never"…) negate the confirm words after them in the same
  clause, which turns "don't do it" and "I do not confirm" into refusals.
- Polite additions carry no weight: "ano prosím", "yes please", "ano, pošli to", "yes thanks"
  confirm. Czech colloquial "no jo" is a `conflict` (English "no" + "jo"): harmless, just not a
  decision.
- Czech and English only; both vocabularies are always active, whatever the session's locale.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Final, Literal

__all__ = [
    "CONFIRM_WORDS",
    "HESITATION_WORDS",
    "MAX_CHARS",
    "MAX_WORDS",
    "NEGATION_WORDS",
    "QUESTION_WORDS",
    "REFUSE_WORDS",
    "ConsentWords",
    "Reason",
    "Verdict",
    "VerdictOutcome",
    "classify",
]

VerdictOutcome = Literal["confirm", "cancel", "neither"]
Reason = Literal[
    "confirmed",  # confirm: every §10.4 condition holds
    "refusal",  # cancel: an explicit refuse word and nothing that contradicts it
    "empty",  # neither: no words at all (noise, emoji, punctuation)
    "too_long",  # neither: more than MAX_WORDS words
    "question",  # neither: "?", a clause opening with a question word, Czech "-li"
    "hesitation",  # neither: hesitation, filler or deferral ("asi", "hmm", "wait", "not yet")
    "condition",  # neither: a condition or change request ("ale", "only", "instead", "change")
    "conflict",  # neither: confirm and refuse words together ("ne, ano", "no yes")
    "negation",  # neither: a negation without an explicit refuse word ("not that one")
    "no_confirm_word",  # neither: ordinary conversation
    "keyword_missing",  # neither: a confirm word, but not the action's voice keyword
]

MAX_WORDS: Final = 6  # §10.4: "a short sentence (≤ 6 words)"
# Six spoken words never need more characters than this; longer text is too long without reading
# it, which keeps a megabyte of garbage from costing more than a glance.
MAX_CHARS: Final = 1000

# Session words come from the server; these caps keep a hostile or broken list harmless.
_MAX_SESSION_WORDS: Final = 64
_MAX_SESSION_WORD_CHARS: Final = 64
_MAX_PHRASE_WORDS: Final = 16  # a longer session word or keyword is cut (it could never match)
# No vocabulary entry is longer; longer tokens are counted but never folded or matched by rule.
_MAX_TOKEN_CHARS: Final = 64

# --- vocabularies (written naturally; compared after the same folding as utterances) -----------

# Words and phrases that say "yes, do it". Intensifiers ("určitě", "definitely") are here because
# alone they are a yes; next to a negation they merely make the sentence a non-decision.
CONFIRM_WORDS: Final = frozenset(
    {
        # Czech
        "ano", "jo", "jj", "jojo", "to jo", "jasně", "jistě", "určitě", "rozhodně", "samozřejmě",
        "přesně", "správně", "klidně", "dobře", "dobrá", "v pořádku", "platí", "beru", "může být",
        "souhlas", "souhlasím", "potvrzuji", "potvrzuju", "potvrzuji to", "potvrzuju to",
        "potvrdit", "potvrzeno", "potvrď", "potvrďte", "pokračuj", "pokračujte", "do toho",
        "jdi do toho", "udělej to", "udělejte to", "proveď", "proveďte", "proveď to", "pošli",
        "pošli to", "pošlete", "pošlete to", "odešli", "odešli to", "odešlete", "okej", "oukej",
        # English
        "yes", "yeah", "yep", "yup", "yea", "sure", "for sure", "ok", "okay", "fine",
        "confirm", "confirmed", "i confirm", "affirmative", "approve", "approved", "agreed",
        "correct", "all right", "alright", "absolutely", "definitely", "certainly", "of course",
        "go ahead", "go for it", "do it", "proceed", "send it", "please do", "sounds good",
    }
)  # fmt: skip

# Explicit refusals. Negated Czech verbs are refusals of the action, not mere negations.
REFUSE_WORDS: Final = frozenset(
    {
        # Czech
        "ne", "nee", "nene", "nenene", "nikoliv", "nikoli", "ani náhodou", "v žádném případě",
        "zruš", "zruš to", "zrušit", "zrušte", "zrušte to", "storno", "stornuj", "stornovat",
        "nechci", "nesouhlasím", "nepotvrzuji", "nepotvrzuju", "neposílej", "neposílejte",
        "neodesílej", "neodesílejte", "nedělej", "nedělejte", "neprováděj", "nepokračuj",
        "odmítám", "zamítám", "přestaň", "zastav", "stůj", "nech to být", "nech toho",
        "zapomeň", "zapomeň na to",
        # English
        "no", "nope", "nah", "no way", "cancel", "cancel it", "stop", "abort", "negative",
        "never", "never mind", "nevermind", "reject", "decline", "forget it", "dont", "do not",
        "not at all",
    }
)  # fmt: skip

# Negations: any of these forbids a confirm; alone (without a refuse word) they are not a cancel.
NEGATION_WORDS: Final = frozenset(
    {
        # Czech: the particles and the everyday "ne-" verbs ("ne-" + a confirm word or an action
        # verb is caught by rule, see _NEGATABLE_CZECH_VERBS).
        "ne", "nee", "nene", "nikoliv", "nikoli", "ani", "nic", "nikdy", "není", "nejsem",
        "nemám", "nemůžu", "nemůžeš", "nemusíš", "nesmíš", "nejde", "nechci", "nechte", "nevadí",
        "neposílej", "nedělej", "nesouhlasím", "nepotvrzuji", "nepotvrzuju",
        # English (apostrophes are dropped before comparing, so "don't" is "dont")
        "no", "not", "dont", "do not", "never", "nothing", "nobody", "none", "neither", "nor",
        "cannot", "cant", "wont", "wouldnt", "shouldnt", "isnt", "arent", "wasnt", "didnt",
        "doesnt", "havent", "hasnt",
    }
)  # fmt: skip

# English negators scope over the rest of their clause: "don't do it", "I do not confirm".
# (Czech negates the verb itself with "ne-", which the prefix rule handles.)
_SCOPED_NEGATORS: Final = frozenset(
    {
        "not", "dont", "do not", "never", "cannot", "cant", "wont", "wouldnt", "shouldnt",
        "didnt", "doesnt",
    }
)  # fmt: skip

# Czech verbs a person is likely to negate when refusing ("ne" + verb, written as one word).
_NEGATABLE_CZECH_VERBS: Final = frozenset(
    {
        "posílej", "posílejte", "posílat", "poslat", "odesílej", "odesílejte", "odesílat",
        "odeslat", "dělej", "dělejte", "dělat", "prováděj", "provádět", "potvrzuj", "potvrzovat",
        "pokračuj", "pokračovat", "chci", "chceme", "maž", "mazat", "plať", "platit", "objednávej",
        "objednávat", "spouštěj", "spouštět", "ukládej", "ukládat",
    }
)  # fmt: skip

# Hesitation, fillers and deferrals: the person has not made up their mind (yet).
HESITATION_WORDS: Final = frozenset(
    {
        # Czech
        "asi", "možná", "snad", "nevím", "ještě nevím", "třeba", "spíš", "spíše", "nejspíš",
        "nejspíše", "pravděpodobně", "myslím", "uvidíme", "rozmyslím", "rozmyslet", "počkej",
        "počkejte", "počkat", "počkám", "moment", "momentík", "momentek", "chvilku", "chviličku",
        "vteřinku", "sekundu", "nejsem si jistý", "nejsem si jistá", "nejsem si jist",
        "ještě ne", "zatím ne", "teď ne", "ne teď", "později", "ehm",
        # English
        "maybe", "perhaps", "probably", "possibly", "wait", "hold on", "hang on", "hold off",
        "not sure", "unsure", "i guess", "guess", "i think", "i suppose", "suppose", "kind of",
        "kinda", "sort of", "sorta", "let me think", "let me see", "not yet", "not now", "later",
        "well", "um", "uh", "hmm",
    }
)  # fmt: skip

# Fillers in any length: "hm", "hmmm", "ehm", "eee", "uhm", "umm", "erm", "mmm".
_FILLER = re.compile(r"h+m+|e+h*m+|e+h+|e{2,}|u+h*m+|u+h+|e+r+m*|m{2,}|a{2,}h*")

# A condition or a change: the person wants something other than the proposal as it was read.
_CONDITION_WORDS: Final = frozenset(
    {
        # Czech
        "ale", "až", "pokud", "jestli", "jestliže", "kdyby", "kdybys", "když", "jenže", "akorát",
        "jen", "jenom", "pouze", "kromě", "místo", "bez", "nebo", "jinak", "jinam", "jiný",
        "jinou", "jiné", "jinému", "druhý", "druhá", "druhé", "druhou", "změň", "změňte",
        "změnit", "oprav", "opravit", "uprav", "upravit", "přidej", "přidat", "odeber", "odebrat",
        # English
        "but", "if", "unless", "except", "only", "instead", "however", "though", "although",
        "without", "or", "other", "another", "different", "change", "edit", "modify", "fix",
        "add", "remove", "update",
    }
)  # fmt: skip

# Words that open a question when they open a clause ("co to je", "what is it"). "do" is left
# out because "do it" confirms; "will" because "will do" does.
QUESTION_WORDS: Final = frozenset(
    {
        # Czech
        "co", "cože", "copak", "proč", "pročpak", "jak", "jakpak", "jaký", "jaká", "jaké",
        "jakou", "kolik", "kdy", "kdo", "koho", "komu", "kde", "kam", "odkud", "kudy", "který",
        "která", "které", "kterou", "čí", "pardon",
        # English
        "what", "whats", "why", "how", "hows", "which", "who", "whom", "whose", "when", "where",
        "is", "are", "am", "was", "were", "does", "did", "can", "could", "should", "shall",
        "would", "may", "might", "have", "has", "huh",
    }
)  # fmt: skip

# Set phrases whose "no"/"not"/"bez" negates nothing about the action: they count as ordinary
# words, so "no problem" neither cancels nor (being a negation, per §10.4) confirms by itself.
_NEUTRAL_PHRASES: Final = frozenset(
    {"no problem", "not a problem", "no worries", "bez problému", "bez obav"}
)

# Leading conjunctions skipped when looking for a clause's question word ("a kolik to stojí").
_CLAUSE_LEAD_INS: Final = frozenset({"a", "and", "tak", "so"})


# --- normalisation --------------------------------------------------------------------------

_QUESTION_MARKS: Final = ("?", "¿", "؟")  # NFKC has already turned "？" into "?"
_APOSTROPHES: Final = dict.fromkeys(map(ord, "'’‘ʼ`´"))
_DOTTED_OK = re.compile(r"\bo\.\s*k\b\.?")  # "O.K." is one word, not two clauses
_INNER_HYPHEN = re.compile(r"(?<=[^\W_])[-‐‑](?=[^\W_])")
# "je-li", "chceš-li": a question or a condition. The lookbehind and the possessive "++" keep the
# search linear on a megabyte-long "word" (a plain "+" backtracks from every letter: quadratic).
_CZECH_LI = re.compile(r"(?<![^\W_])[^\W_]++[-‐‑]li\b")
# A word, or a clause break: sentence punctuation or a free-standing dash. Anything else (emoji,
# symbols) is neither and simply disappears.
_TOKEN = re.compile(r"(?P<word>[^\W_]+)|[.,;:!?¿؟¡…–—\"“”„«»()\[\]{}/|]+|\s-+\s")


def _fold(word: str) -> str:
    """The word without diacritics (speech-to-text may drop them)."""
    if word.isascii() or len(word) > _MAX_TOKEN_CHARS:
        return word
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _prepare(text: str) -> str:
    """NFKC, case-folded text without apostrophes ("don't" is "dont")."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    return _DOTTED_OK.sub("ok", folded)


def _clauses(prepared: str, limit: int) -> tuple[list[list[str]], int]:
    """Folded words per clause, and the word count; stops reading once it passes `limit`."""
    clauses: list[list[str]] = [[]]
    count = 0
    for match in _TOKEN.finditer(_INNER_HYPHEN.sub("", prepared)):
        word = match.group("word")
        if word is None:
            if clauses[-1]:
                clauses.append([])
            continue
        count += 1
        if count > limit:
            break
        clauses[-1].append(_fold(word))
    return [words for words in clauses if words], count


def _phrase(text: str) -> tuple[str, ...]:
    """A vocabulary entry (or keyword) as the folded word sequence utterances are matched with."""
    clauses, _ = _clauses(_prepare(text), limit=_MAX_PHRASE_WORDS)
    return tuple(word for words in clauses for word in words)


# --- the lexicon ----------------------------------------------------------------------------


# What a matched word or phrase means, as bits: one phrase may mean several things ("ne" is a
# refusal and a negation). Plain ints, because enum.Flag arithmetic doubled the classifier's time.
_CONFIRM: Final = 1
_REFUSE: Final = 2
_NEGATION: Final = 4
_SCOPED_NEGATOR: Final = 8
_HESITATION: Final = 16
_CONDITION: Final = 32
_KEYWORD: Final = 64
_NEUTRAL: Final = 128  # matched, so its words are consumed, but it means nothing


@dataclass(frozen=True)
class _Lexicon:
    """Folded phrases with their categories, plus the single words negatable with "ne-"."""

    phrases: Mapping[tuple[str, ...], int]
    longest: int
    negatable: frozenset[str]


def _add(table: dict[tuple[str, ...], int], words: Iterable[str], cat: int) -> None:
    for word in words:
        phrase = _phrase(word)
        if phrase:
            table[phrase] = table.get(phrase, 0) | cat


def _single_words(table: Mapping[tuple[str, ...], int], cat: int) -> set[str]:
    return {phrase[0] for phrase, cats in table.items() if len(phrase) == 1 and cats & cat}


def _builtin_table() -> dict[tuple[str, ...], int]:
    table: dict[tuple[str, ...], int] = {}
    _add(table, CONFIRM_WORDS, _CONFIRM)
    _add(table, REFUSE_WORDS, _REFUSE)
    _add(table, NEGATION_WORDS, _NEGATION)
    _add(table, _SCOPED_NEGATORS, _NEGATION | _SCOPED_NEGATOR)
    _add(table, HESITATION_WORDS, _HESITATION)
    _add(table, _CONDITION_WORDS, _CONDITION)
    _add(table, _NEUTRAL_PHRASES, _NEUTRAL)
    return table


_BUILTIN_TABLE: Final = _builtin_table()
_NEGATABLE_VERBS: Final = frozenset(_fold(verb) for verb in _NEGATABLE_CZECH_VERBS)
_QUESTION_STARTERS: Final = frozenset(p[0] for p in map(_phrase, QUESTION_WORDS) if len(p) == 1)
_LEAD_INS: Final = frozenset(_fold(word) for word in _CLAUSE_LEAD_INS)


@dataclass(frozen=True)
class ConsentWords:
    """Session words that extend the built-in vocabularies (§10.1 `consent`)."""

    confirm: tuple[str, ...] = ()
    refuse: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Tuples keep the words hashable (the compiled vocabulary is cached per ConsentWords).
        object.__setattr__(self, "confirm", tuple(self.confirm))
        object.__setattr__(self, "refuse", tuple(self.refuse))

    @classmethod
    def from_wire(cls, value: object) -> ConsentWords:
        """Build from the session's `consent` object, dropping anything that is not a word list."""
        if not isinstance(value, Mapping):
            return cls()
        return cls(
            confirm=_wire_words(value.get("confirm")), refuse=_wire_words(value.get("refuse"))
        )


def _wire_words(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    words = (w for w in value if isinstance(w, str) and 0 < len(w) <= _MAX_SESSION_WORD_CHARS)
    return tuple(islice(words, _MAX_SESSION_WORDS))


@lru_cache(maxsize=64)
def _lexicon(extra: ConsentWords | None, keyword: tuple[str, ...]) -> _Lexicon:
    table = dict(_BUILTIN_TABLE)
    if extra is not None:
        _add(table, extra.confirm, _CONFIRM)
        _add(table, extra.refuse, _REFUSE)
    if keyword:
        # The keyword is itself a confirm word: "odeslat" alone confirms when it is the keyword.
        table[keyword] = table.get(keyword, 0) | _KEYWORD | _CONFIRM
    negatable = _NEGATABLE_VERBS | _single_words(table, _CONFIRM)
    return _Lexicon(table, max(len(p) for p in table), frozenset(negatable))


def _categories(word: str, lexicon: _Lexicon) -> int:
    """Categories of a word no phrase matched: fillers and Czech "ne-" + verb."""
    if len(word) > _MAX_TOKEN_CHARS:
        return 0
    if _FILLER.fullmatch(word):
        return _HESITATION
    if word.startswith("ne") and word[2:] in lexicon.negatable:
        # "nepotvrzuji", "neposílej", "neodeslat" (keyword): the action itself is refused.
        return _REFUSE | _NEGATION
    return 0


# --- the classifier -------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What an utterance means for the pending action, why, and the words that decided it."""

    outcome: VerdictOutcome
    reason: Reason
    cue: str | None = None


@dataclass
class _Findings:
    """The first word of each kind found in an utterance."""

    confirm: str | None = None
    refuse: str | None = None
    negation: str | None = None
    hesitation: str | None = None
    condition: str | None = None
    keyword: bool = False


def _contains(words: list[str], phrase: tuple[str, ...]) -> bool:
    """True when `phrase` occurs as consecutive words of `words`."""
    size = len(phrase)
    return size > 0 and any(
        tuple(words[i : i + size]) == phrase for i in range(len(words) - size + 1)
    )


def _scan(clauses: list[list[str]], lexicon: _Lexicon, keyword: tuple[str, ...] = ()) -> _Findings:
    """Match the longest phrases left to right, clause by clause."""
    found = _Findings()
    for words in clauses:
        negator: str | None = None  # an English negator earlier in this clause
        i = 0
        while i < len(words):
            cats, size = 0, 1
            for length in range(min(lexicon.longest, len(words) - i), 0, -1):
                match = lexicon.phrases.get(tuple(words[i : i + length]))
                if match is not None:
                    cats, size = match, length
                    break
            if cats == 0:
                cats = _categories(words[i], lexicon)
            cue = " ".join(words[i : i + size])
            i += size
            if cats & _CONFIRM and negator is not None:
                # "don't do it", "I do not confirm": a negated confirm word refuses.
                cats = (cats & ~(_CONFIRM | _KEYWORD)) | _REFUSE
                cue = f"{negator} {cue}"
            if cats & _SCOPED_NEGATOR:
                negator = negator or cue
            if cats & _CONFIRM:
                found.confirm = found.confirm or cue
                # The keyword may sit inside a longer confirm phrase ("send it" for "send").
                inside = _contains(words[i - size : i], keyword)
                found.keyword = found.keyword or bool(cats & _KEYWORD) or inside
            if cats & _REFUSE:
                found.refuse = found.refuse or cue
            if cats & _NEGATION:
                found.negation = found.negation or cue
            if cats & _HESITATION:
                found.hesitation = found.hesitation or cue
            if cats & _CONDITION:
                found.condition = found.condition or cue
    return found


def _question_cue(prepared: str, clauses: list[list[str]]) -> str | None:
    """The mark or word that makes the utterance a question, if any."""
    for mark in _QUESTION_MARKS:
        if mark in prepared:
            return mark
    li = _CZECH_LI.search(prepared)
    if li is not None:
        return li.group()
    for words in clauses:
        opening = next((w for w in words if w not in _LEAD_INS), None)
        if opening in _QUESTION_STARTERS:
            return opening
    return None


def classify(
    text: str, *, keyword: str | None = None, extra: ConsentWords | None = None
) -> Verdict:
    """Classify one final transcript as confirm, cancel or neither (§10.4 step 3)."""
    if len(text) > MAX_CHARS:
        return Verdict("neither", "too_long")
    prepared = _prepare(text)
    clauses, count = _clauses(prepared, MAX_WORDS)
    if count == 0:
        return Verdict("neither", "empty")
    if count > MAX_WORDS:
        return Verdict("neither", "too_long")
    question = _question_cue(prepared, clauses)
    if question is not None:
        return Verdict("neither", "question", question)

    # A blank keyword is no keyword; one with no words in it ("👍") can never be said.
    keyword_required = keyword is not None and bool(keyword.strip())
    keyword_phrase = _phrase(keyword) if keyword_required and keyword is not None else ()
    found = _scan(clauses, _lexicon(extra, keyword_phrase), keyword_phrase)
    if found.hesitation is not None:
        return Verdict("neither", "hesitation", found.hesitation)
    if found.condition is not None:
        return Verdict("neither", "condition", found.condition)
    if found.refuse is not None and found.confirm is not None:
        return Verdict("neither", "conflict", f"{found.refuse} / {found.confirm}")
    if found.refuse is not None:
        return Verdict("cancel", "refusal", found.refuse)
    if found.negation is not None:
        return Verdict("neither", "negation", found.negation)
    if found.confirm is None:
        return Verdict("neither", "no_confirm_word")
    if keyword_required and not found.keyword:
        return Verdict("neither", "keyword_missing", " ".join(keyword_phrase) or None)
    return Verdict("confirm", "confirmed", found.confirm)
