"""The PO reader, the plural rules and the choice of language."""

from __future__ import annotations

from pathlib import Path

import pytest

from talkie_tui import i18n
from talkie_tui.config import Settings
from talkie_tui.i18n import (
    _,
    accept_language,
    choose_language,
    current_language,
    ngettext,
    pgettext,
    system_language,
    use_language,
)
from talkie_tui.i18n.catalog import Catalog, CatalogError, read_po

PO = r"""
# a comment
msgid ""
msgstr ""
"Language: cs\n"

#: talkie_tui/ui/app.py:1
msgid "Help"
msgstr "Nápověda"

msgid "Line one\n"
"and \"two\""
msgstr "Řádek jedna\n"
"a \"dva\""

#, fuzzy
msgid "Unsure"
msgstr "Nejisté"

msgid "Untranslated"
msgstr ""

msgctxt "button"
msgid "Open"
msgstr "Otevřít"

msgid "Open"
msgstr "Otevřeno"

msgid "{count} thread"
msgid_plural "{count} threads"
msgstr[0] "{count} vlákno"
msgstr[1] "{count} vlákna"
msgstr[2] "{count} vláken"
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    path = tmp_path / "test.po"
    path.write_text(PO, encoding="utf-8")
    return Catalog.from_files("cs", [path])


def test_reads_entries_escapes_context_and_plurals(catalog: Catalog) -> None:
    assert catalog.gettext("Help") == "Nápověda"
    assert catalog.gettext('Line one\nand "two"') == 'Řádek jedna\na "dva"'
    assert catalog.gettext("Open") == "Otevřeno"
    assert catalog.gettext("Open", "button") == "Otevřít"
    assert catalog.gettext("Unsure") == "Unsure"  # fuzzy: not trusted, as gettext does
    assert catalog.gettext("Untranslated") == "Untranslated"
    assert catalog.gettext("Unknown") == "Unknown"


@pytest.mark.parametrize(
    ("count", "form"),
    [
        (0, "0 vláken"),
        (1, "1 vlákno"),
        (2, "2 vlákna"),
        (4, "4 vlákna"),
        (5, "5 vláken"),
        (11, "11 vláken"),
        (22, "22 vláken"),
    ],
)
def test_czech_has_three_plural_forms(catalog: Catalog, count: int, form: str) -> None:
    assert catalog.ngettext("{count} thread", "{count} threads", count).format(count=count) == form


def test_english_plurals_without_a_catalog() -> None:
    english = Catalog("en")
    assert english.ngettext("{count} thread", "{count} threads", 1) == "{count} thread"
    assert english.ngettext("{count} thread", "{count} threads", 0) == "{count} threads"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('msgid "a"\nmsgstr "b\n', "double quotes"),
        ('msgid "a"\nmsgstr "b\\q"\n', "unknown escape"),
        ('msgid "a"\nmsgstr "b"c"\n', "unescaped quote"),
        ('"orphan"\n', "continues no keyword"),
        ('msgid "a"\nmsgfoo "b"\n', "unknown keyword"),
        ('msgstr "b"\n', "without msgid"),
        ('msgid "a"\nmsgid_plural "b"\nmsgid_plural "c"\n', "twice"),
    ],
)
def test_broken_catalogs_name_the_line(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "broken.po"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError, match=problem) as caught:
        read_po(path)
    assert str(path) in str(caught.value)


LANG_C = {"LANG": "C.UTF-8"}
LANG_CS = {"LANG": "cs_CZ.UTF-8"}
LANG_EN = {"LANG": "en_GB.UTF-8"}
LANG_DE = {"LANG": "de_DE.UTF-8"}


@pytest.mark.parametrize(
    ("setting", "manifest", "environ", "chosen"),
    [
        ("auto", None, LANG_CS, "cs"),  # the system's language
        ("auto", "cs", LANG_EN, "en"),  # the person's language wins over the server's
        ("auto", "cs", LANG_C, "cs"),  # no language set (SSH, containers): the server's
        ("auto", "cs-CZ", {}, "cs"),
        ("auto", "cs", LANG_DE, "cs"),  # a language we do not speak: the server's
        ("auto", "de", LANG_DE, "en"),  # neither: English
        ("auto", None, LANG_C, "en"),
        ("en", "cs", LANG_CS, "en"),  # the setting overrides everything
        ("cs", None, LANG_EN, "cs"),
        ("auto", None, {"LANG": "en_US.UTF-8", "LANGUAGE": "cs:en"}, "cs"),  # GNU's list first
        ("auto", "cs", {"LANG": "C", "LANGUAGE": "en"}, "cs"),  # LANGUAGE ignored under C
        ("auto", None, {"LC_ALL": "cs_CZ.UTF-8", "LANG": "en_US.UTF-8"}, "cs"),
        ("auto", None, {"LC_MESSAGES": "en_US", "LANG": "cs_CZ"}, "en"),
        ("auto", None, {"LANG": "cs_CZ.UTF-8@euro"}, "cs"),
    ],
)
def test_choose_language(
    setting: str, manifest: str | None, environ: dict[str, str], chosen: str
) -> None:
    assert choose_language(setting, manifest, environ) == chosen


def test_system_language_reads_the_real_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "cs_CZ.UTF-8")
    assert system_language() == "cs"


def test_use_language_and_the_translation_functions() -> None:
    use_language("cs")
    assert current_language() == "cs"
    assert _("Cancel") == "Zrušit"
    assert pgettext("nowhere", "Cancel") == "Cancel"  # another context: untranslated
    assert ngettext("{count} apple", "{count} apples", 3) == "{count} apples"  # unknown: English
    assert accept_language() == "cs, en;q=0.5"
    use_language("xx")  # unknown: English
    assert current_language() == "en" and _("Cancel") == "Cancel"
    assert accept_language() == "en"


def test_the_setting_is_validated() -> None:
    assert Settings.from_mapping({"language": "cs"}).language == "cs"
    wrong = Settings.from_mapping({"language": "klingon"})
    assert wrong.language == "auto"
    assert wrong.warnings and '"auto", "en", "cs"' in wrong.warnings[0]


def test_every_language_has_a_plural_rule() -> None:
    assert set(i18n.LANGUAGES) <= set(i18n.PLURAL_RULES)
