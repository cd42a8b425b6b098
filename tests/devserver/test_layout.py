"""The reference servers' layout: `common/` is protocol-neutral, each package says what it holds."""

from __future__ import annotations

import ast
from pathlib import Path

import talkie_tui.devserver

DEVSERVER = Path(talkie_tui.devserver.__file__).parent
COMMON = DEVSERVER / "common"
# What the shared pieces may not know: a server package, AG-UI, or the client's layers.
FORBIDDEN = ("ag_ui", "talkie_tui.")


def _imports(path: Path) -> list[str]:
    """The modules a file imports, relative ones resolved against the `talkie_tui` package."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(DEVSERVER.parent.parent).with_suffix("").parts[:-1])
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append(node.module or "")
                continue
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1]
            found.append(".".join([*base, node.module] if node.module else base))
    return found


def test_the_shared_pieces_import_no_server_and_no_protocol() -> None:
    files = sorted(COMMON.rglob("*.py"))
    assert files
    for path in files:
        for module in _imports(path):
            inside = module.startswith("talkie_tui.devserver.common")
            assert inside or not module.startswith(FORBIDDEN), f"{path.name} imports {module}"


def test_every_package_says_what_it_holds() -> None:
    for init in sorted(DEVSERVER.rglob("__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring, f"{init.relative_to(DEVSERVER)} has no docstring"
