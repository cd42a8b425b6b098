"""Translation catalogs: a reader for the subset of the PO format our catalogs use.

PO is what translators' tools (Poedit, Weblate, Lokalize) read and write. We read it ourselves
instead of compiling `.mo` files, so a catalog edit needs no build step. Supported: comments,
`msgctxt` (kept apart from other entries), `msgid`, `msgid_plural`, `msgstr`, `msgstr[N]`,
strings split over lines and the C escapes `\\n \\t \\" \\\\`. Fuzzy entries and empty
translations are skipped, as gettext does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

PluralRule = Callable[[int], int]

# Which plural form a count takes, per language (the `Plural-Forms` of its PO header, as code:
# evaluating a catalog's C expression would run data as code).
PLURAL_RULES: dict[str, PluralRule] = {
    "en": lambda n: 0 if n == 1 else 1,
    "cs": lambda n: 0 if n == 1 else 1 if 2 <= n <= 4 else 2,
}

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}


class CatalogError(ValueError):
    """A catalog file that is not valid PO; the message names the file and line."""


@dataclass(frozen=True)
class Entry:
    """One message of a catalog, as written in the PO file."""

    msgid: str
    translations: tuple[str, ...]
    plural: str | None = None
    context: str | None = None
    fuzzy: bool = False
    line: int = 0


@dataclass
class Catalog:
    """The translations of one language, looked up by English source text."""

    language: str
    messages: dict[tuple[str | None, str], tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_files(cls, language: str, paths: Iterable[Path]) -> Catalog:
        """Every usable entry of the given PO files (a later file wins a conflict)."""
        catalog = cls(language)
        for path in paths:
            for entry in read_po(path):
                if entry.msgid and not entry.fuzzy and all(entry.translations):
                    catalog.messages[(entry.context, entry.msgid)] = entry.translations
        return catalog

    def gettext(self, message: str, context: str | None = None) -> str:
        """The translation of `message`, or the message itself when there is none."""
        found = self.messages.get((context, message))
        return found[0] if found else message

    def ngettext(self, singular: str, plural: str, count: int) -> str:
        """The form of `singular`/`plural` for `count` items in this language."""
        found = self.messages.get((None, singular))
        if found:
            rule = PLURAL_RULES.get(self.language, PLURAL_RULES["en"])
            index = rule(count)
            return found[index] if index < len(found) else found[-1]
        return singular if count == 1 else plural


def read_po(path: Path) -> list[Entry]:
    """The entries of a PO file; raises `CatalogError` naming the line of a syntax error."""
    return _PoReader(path).read()


class _PoReader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[Entry] = []
        self._reset()

    def _reset(self) -> None:
        self.fields: dict[str, list[str]] = {}
        self.current: str | None = None
        self.fuzzy = False
        self.start = 0

    def read(self) -> list[Entry]:
        text = self.path.read_text(encoding="utf-8")
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line:
                self._finish()
            elif line.startswith("#"):
                if self.fields:
                    self._finish()
                if line.startswith("#,") and "fuzzy" in line:
                    self.fuzzy = True
            elif line.startswith('"'):
                if self.current is None:
                    raise self._error(number, "a string continues no keyword")
                self.fields[self.current].append(self._unquote(line, number))
            else:
                keyword, _, rest = line.partition(" ")
                if keyword not in ("msgctxt", "msgid", "msgid_plural", "msgstr") and not (
                    keyword.startswith("msgstr[") and keyword.endswith("]")
                ):
                    raise self._error(number, f"unknown keyword {keyword!r}")
                translated = any(key.startswith("msgstr") for key in self.fields)
                if keyword in ("msgctxt", "msgid") and translated:
                    self._finish()
                if keyword in self.fields:
                    raise self._error(number, f"{keyword} appears twice in one entry")
                if not self.fields:
                    self.start = number
                self.current = keyword
                self.fields[keyword] = [self._unquote(rest.strip(), number)]
        self._finish()
        return self.entries

    def _finish(self) -> None:
        if self.fields:
            joined = {key: "".join(parts) for key, parts in self.fields.items()}
            if "msgid" not in joined:
                raise self._error(self.start, "an entry without msgid")
            plural = joined.get("msgid_plural")
            if plural is None:
                translations: tuple[str, ...] = (joined.get("msgstr", ""),)
            else:
                forms = sorted(
                    (int(key[7:-1]), value)
                    for key, value in joined.items()
                    if key.startswith("msgstr[")
                )
                translations = tuple(value for _, value in forms) or ("",)
            self.entries.append(
                Entry(
                    joined["msgid"],
                    translations,
                    plural,
                    joined.get("msgctxt"),
                    self.fuzzy,
                    self.start,
                )
            )
        self._reset()

    def _unquote(self, text: str, number: int) -> str:
        if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
            raise self._error(number, "a string must be in double quotes")
        body, out, index = text[1:-1], [], 0
        while index < len(body):
            char = body[index]
            if char == "\\":
                if index + 1 >= len(body) or body[index + 1] not in _ESCAPES:
                    raise self._error(number, "an unknown escape")
                out.append(_ESCAPES[body[index + 1]])
                index += 2
                continue
            if char == '"':
                raise self._error(number, "an unescaped quote inside a string")
            out.append(char)
            index += 1
        return "".join(out)

    def _error(self, number: int, what: str) -> CatalogError:
        return CatalogError(f"{self.path}:{number}: {what}")
