"""Find the translatable text in the source and compare it with a catalog.

`python -m talkie_tui.i18n.extract` prints, as PO entries ready to translate, every message the
code uses that the Czech catalog lacks, then lists the catalog's entries no code uses any more.
The test suite runs the same comparison, so a new UI string without a translation fails it.
"""

from __future__ import annotations

import ast
import string
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from talkie_tui.i18n import catalog_dir
from talkie_tui.i18n.catalog import Entry, read_po

# The functions whose literal arguments are messages: name -> (context arg, msgid arg, plural arg).
MARKERS: dict[str, tuple[int | None, int, int | None]] = {
    "_": (None, 0, None),
    "N_": (None, 0, None),
    "pgettext": (0, 1, None),
    "ngettext": (None, 0, 1),
}
PACKAGE = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Message:
    """A message the code asks to translate, and where."""

    msgid: str
    plural: str | None
    context: str | None
    where: str


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def messages_in(path: Path) -> Iterator[Message]:
    """The messages marked in one Python file (non-literal arguments are skipped)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        marker = MARKERS.get(node.func.id)
        if marker is None:
            continue
        context_at, msgid_at, plural_at = marker
        args = node.args
        if len(args) <= max(i for i in marker if i is not None):
            continue
        msgid = _literal(args[msgid_at])
        if msgid is None:
            continue
        yield Message(
            msgid,
            _literal(args[plural_at]) if plural_at is not None else None,
            _literal(args[context_at]) if context_at is not None else None,
            f"{path.relative_to(PACKAGE.parent)}:{node.lineno}",
        )


def source_messages(root: Path = PACKAGE) -> dict[tuple[str | None, str], Message]:
    """Every message marked in the package (the first place each is used)."""
    found: dict[tuple[str | None, str], Message] = {}
    for path in sorted(root.rglob("*.py")):
        for message in messages_in(path):
            found.setdefault((message.context, message.msgid), message)
    return found


def catalog_entries(language: str) -> list[tuple[Path, Entry]]:
    """Every entry of the language's PO files, with its file."""
    return [
        (path, entry)
        for path in sorted(catalog_dir(language).glob("*.po"))
        for entry in read_po(path)
        if entry.msgid
    ]


def placeholders(text: str) -> set[str]:
    """The `str.format` fields a message uses."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return {"<invalid format string>"}


def _po_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def po_stub(message: Message) -> str:
    """A PO entry for `message` with an empty translation."""
    lines = [f"#: {message.where}"]
    if message.context is not None:
        lines.append(f"msgctxt {_po_string(message.context)}")
    lines.append(f"msgid {_po_string(message.msgid)}")
    if message.plural is None:
        lines.append('msgstr ""')
    else:
        lines += [f"msgid_plural {_po_string(message.plural)}"]
        lines += [f'msgstr[{i}] ""' for i in range(3)]
    return "\n".join(lines)


def main(language: str = "cs") -> int:
    """Print the missing entries as PO stubs and the unused ones as a list; 1 if any."""
    used = source_messages()
    have = {(entry.context, entry.msgid) for _, entry in catalog_entries(language)}
    missing = [message for key, message in used.items() if key not in have]
    unused = sorted(have - used.keys(), key=lambda key: key[1])
    for message in missing:
        print(po_stub(message), end="\n\n")
    for context, msgid in unused:
        print(f"# unused in {language}: {msgid!r}" + (f" (context {context!r})" if context else ""))
    return 1 if missing or unused else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
