"""No UI notification reads its text as markup (server text is data: docs/ARCHITECTURE.md).

Textual's `notify` reads its message as content markup unless it is given `markup=False`, and
so do `Widget.notify` and the `notify` action. The scan below looks at every module in
`talkie_tui.ui` and fails on:

- a `notify(...)` call without a literal `markup=False` (missing, True, or a variable);
- a `notify` that is passed on instead of called (`call_from_thread(self.notify, …)`,
  `functools.partial(app.notify, …)`): whoever calls it later decides the markup;
- an action string that calls `notify` (`Binding("n", "app.notify('…')")`).

`talkie_tui.ui.support.notify.notify_plain` is the one way to show a notification.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import talkie_tui.ui

UI = Path(talkie_tui.ui.__file__).parent
NOTIFY_ACTION = re.compile(r"^\s*(?:\w+\.)*notify\(")


def _markup_off(call: ast.Call) -> bool:
    return any(
        keyword.arg == "markup"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is False
        for keyword in call.keywords
    )


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _notify_action(node: ast.AST) -> bool:
    """A string that is a Textual action calling `notify` (its markup is on by default)."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and NOTIFY_ACTION.match(node.value) is not None
    )


def markup_notifications(tree: ast.AST) -> list[int]:
    """The lines of `tree` where a notification may read its text as markup."""
    found: set[int] = set()
    called: set[int] = set()  # ids of the `x.notify` nodes that are a call's function
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) == "notify":
            called.add(id(node.func))
            if not _markup_off(node):
                found.add(node.lineno)
    for node in ast.walk(tree):
        passed_on = isinstance(node, ast.Attribute) and node.attr == "notify"
        if (passed_on and id(node) not in called) or _notify_action(node):
            found.add(node.lineno)
    return sorted(found)


def _ui_files() -> list[Path]:
    return sorted(UI.rglob("*.py"))


def test_the_scan_sees_the_ui() -> None:
    names = {path.relative_to(UI).as_posix() for path in _ui_files()}
    # chat.py still calls `notify(..., markup=False)` by hand: it is scanned like the rest.
    assert {"app.py", "support/notify.py", "chat/screen.py", "screens/connect.py"} <= names


@pytest.mark.parametrize("path", _ui_files(), ids=lambda path: str(path.relative_to(UI)))
def test_no_notification_reads_markup(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert markup_notifications(tree) == [], (
        f"{path.name}: show notifications with talkie_tui.ui.support.notify.notify_plain "
        "(or pass markup=False): server text must never be read as markup"
    )


def test_the_scan_catches_what_it_should() -> None:
    tree = ast.parse(
        "self.notify(text)\n"  # 1: markup missing
        "self.notify(text, markup=True)\n"  # 2
        "self.app.notify(text, markup=plain)\n"  # 3: not a literal False
        "self.notify(text, **options)\n"  # 4: may carry markup=True
        "app.call_from_thread(app.notify, text, markup=False)\n"  # 5: passed on, not called
        "show = functools.partial(self.notify, severity='error')\n"  # 6
        "Binding('n', \"app.notify('[b]hi[/b]')\", 'Hi')\n"  # 7: the notify action
        "notify(text)\n"  # 8
        "self.notify(text, severity='error', markup=False)\n"  # fine
        "super().notify(message, title=title, markup=False)\n"  # fine
        "notify_plain(self, text, severity='warning')\n"  # fine
        "app.call_from_thread(notify_plain, app, text)\n"  # fine
        "self.post_message(self.Notify(text))\n"  # fine: another name
        "label = 'notify me'\n"  # fine: words, not an action
    )
    assert markup_notifications(tree) == [1, 2, 3, 4, 5, 6, 7, 8]
