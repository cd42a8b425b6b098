"""Every UI string is in the catalogs, and every Czech entry fits the English it translates.

The messages are found the way translators' tools find them: the literal arguments of `_()`,
`N_()`, `pgettext()` and `ngettext()` anywhere in the package. A second scan makes sure UI text
is not left unwrapped in the places text reaches the screen.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from talkie_tui.i18n import catalog
from talkie_tui.i18n.extract import (
    PACKAGE,
    catalog_entries,
    main,
    placeholders,
    po_stub,
    source_messages,
)

LANGUAGES = ["cs"]
KEY_NAMES = re.compile(r"\b(?:F\d{1,2}|Ctrl\+\w+|Shift\+\w+|Alt\+\w+)\b")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_is_translated_and_none_is_stale(language: str) -> None:
    used = source_messages()
    entries = catalog_entries(language)
    have = {(entry.context, entry.msgid) for _path, entry in entries if all(entry.translations)}
    missing = [po_stub(message) for key, message in used.items() if key not in have]
    assert not missing, "untranslated (add to a catalog):\n\n" + "\n\n".join(missing)
    stale = sorted(msgid for context, msgid in have - used.keys())
    assert not stale, f"catalog entries no code uses: {stale}"
    assert len(used) > 300  # the scan found the UI's text, not nothing


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_message_is_translated_twice(language: str) -> None:
    keys = Counter((entry.context, entry.msgid) for _path, entry in catalog_entries(language))
    assert [key for key, count in keys.items() if count > 1] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_translations_keep_placeholders_keys_and_plain_text(language: str) -> None:
    problems = []
    for path, entry in catalog_entries(language):
        where = f"{path.name}:{entry.line} {entry.msgid!r}"
        wanted = placeholders(entry.msgid) | placeholders(entry.plural or "")
        if entry.plural is not None and len(entry.translations) != 3:
            problems.append(f"{where}: Czech needs 3 plural forms")
        for text in entry.translations:
            if placeholders(text) != wanted:
                problems.append(f"{where}: placeholders {placeholders(text)} != {wanted}")
            if set(KEY_NAMES.findall(entry.msgid)) != set(KEY_NAMES.findall(text)):
                problems.append(f"{where}: key names differ in {text!r}")
            if any(ord(char) < 32 and char != "\n" for char in text):
                problems.append(f"{where}: a control character in {text!r}")
            if "[" in text and "[" not in entry.msgid:
                problems.append(f"{where}: a bracket (markup?) the English lacks: {text!r}")
    assert problems == []


def test_the_catalog_loads_for_the_app() -> None:
    catalog.cache_clear()
    assert catalog("cs").gettext("Cancel") == "Zrušit"
    assert catalog("en").messages == {}


def test_the_extraction_tool_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    assert main("cs") == 0, capsys.readouterr().out


# --- no UI text left unwrapped ------------------------------------------------------------

UI = PACKAGE / "ui"
MARKERS = {"_", "N_", "ngettext", "pgettext"}
# Calls whose first positional argument is shown as is.
SHOWN_FIRST = {"notify", "Static", "Label", "Button", "Content", "Option", "Hit", "DiscoveryHit"}
# Calls whose second positional argument is shown as is (the first says where).
SHOWN_SECOND = {"notify_plain"}
# Keyword arguments that are shown.
SHOWN_KEYWORDS = {"title", "placeholder", "tooltip", "description", "label", "help", "message"}
# Attributes that are shown when assigned.
SHOWN_ATTRIBUTES = {"title", "sub_title", "border_title", "border_subtitle", "tooltip"}
SHOWN_CLASS_ATTRIBUTES = {"HELP_GROUP", "TITLE", "SUB_TITLE"}


def _prose(node: ast.expr) -> bool:
    """A literal or f-string that reads as words (not an id, a class or a key name)."""
    if isinstance(node, ast.JoinedStr):
        return any(
            isinstance(part, ast.Constant) and re.search(r"[A-Za-z]{2}", str(part.value))
            for part in node.values
        )
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(re.search(r"[A-Za-z]{2}", node.value)) and (
            " " in node.value.strip() or node.value[:1].isupper()
        )
    return False


def _unwrapped(tree: ast.AST) -> list[tuple[int, str]]:
    found = []

    def flag(node: ast.expr) -> None:
        if _prose(node):
            found.append((node.lineno, ast.unparse(node)[:70]))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
            if name in MARKERS:
                continue
            if name in SHOWN_FIRST and node.args:
                flag(node.args[0])
            if name in SHOWN_SECOND and len(node.args) >= 2:
                flag(node.args[1])
            if name == "Binding" and len(node.args) >= 3:
                flag(node.args[2])
            for keyword in node.keywords:
                if keyword.arg in SHOWN_KEYWORDS:
                    flag(keyword.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                attribute = getattr(target, "attr", None)
                name = getattr(target, "id", None)
                if attribute in SHOWN_ATTRIBUTES or name in SHOWN_CLASS_ATTRIBUTES:
                    flag(node.value)
    return found


def _ui_files() -> list[Path]:
    return sorted(UI.rglob("*.py"))


@pytest.mark.parametrize("path", _ui_files(), ids=lambda path: str(path.relative_to(UI)))
def test_ui_text_goes_through_the_catalog(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _unwrapped(tree) == []


def test_the_unwrapped_text_scan_finds_what_it_should() -> None:
    tree = ast.parse(
        "self.notify('Saved to the downloads folder')\n"
        "self.notify(_('Saved'))\n"
        "Binding('f1', 'help', 'Help')\n"
        "Binding('f1', 'help', N_('Help'))\n"
        "Static(f'Signed in as {name}')\n"
        "Static(classes='hint-line')\n"
        "self.title = 'Threads'\n"
        "HELP_GROUP = 'Voice'\n"
        "Button(_('Quit'), id='quit')\n"
    )
    assert sorted(line for line, _text in _unwrapped(tree)) == [1, 3, 5, 7, 8]


def test_the_unwrapped_text_scan_reads_notify_plain() -> None:
    tree = ast.parse(
        "notify_plain(self, 'Saved to the downloads folder')\n"
        "notify_plain(self, _('Saved'), severity='warning')\n"
        "app.call_from_thread(notify_plain, app, text)\n"
        "notify_plain(self, f'Exported to {path}')\n"
    )
    assert sorted(line for line, _text in _unwrapped(tree)) == [1, 4]
