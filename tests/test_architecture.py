"""The shape of the code, checked so that the map in `docs/ARCHITECTURE.md` cannot rot.

- the layers drawn in the map are the import-linter contract "Layers point downward", and every
  contract of `pyproject.toml` is named in the map;
- nothing tracked in the repository refers to a file outside it (a clone has only the repository);
- no import loops among the modules of `talkie_tui`;
- no module grows past what one person reads in one sitting.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import grimp

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGE = "talkie_tui"
LAYERS_CONTRACT = "Layers point downward"
LAYERS_MARK = "<!-- layers: checked by tests/test_architecture.py -->"

MAX_MODULE_LINES = 500
MAX_CHAT_SCREEN_LINES = 400
CHAT_SCREEN = ROOT / PACKAGE / "ui" / "chat" / "screen.py"

# What points out of the repository: the parent folder's shared notes, the design document
# kept beside the repository, and this machine's own paths. (Written escaped, so that this
# file does not match itself.)
OUTSIDE = re.compile(r"\.\./shared(?![.\w])|\bDESIGN(?:\.md|'s)|/work\/")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def contracts() -> list[dict[str, Any]]:
    """The import-linter contracts of pyproject.toml."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        config = tomllib.load(file)
    found: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return found


def contract_layers() -> list[set[str]]:
    """The layers of the "Layers point downward" contract, top first: each a set of modules."""
    contract = next(c for c in contracts() if c["name"] == LAYERS_CONTRACT)
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def module_of(path: str) -> str:
    """`ui/` or `cli.py` as the module name import-linter uses (`talkie_tui.ui`)."""
    name = path.strip().removesuffix("/").removesuffix(".py").replace("/", ".")
    return f"{PACKAGE}.{name}"


def map_layers(text: str) -> list[set[str]]:
    """The layers of the map's marked block, top first.

    A layer is a line that starts in the first column: its modules (`ui/ | bridge/`) and,
    after two spaces or more, what they hold; indented lines go on with the description.
    """
    after = text.split(LAYERS_MARK, 1)[1]
    block = re.search(r"```[^\n]*\n(.*?)```", after, re.DOTALL)
    assert block is not None, "no fenced block after the layers mark"
    layers = []
    for line in block.group(1).splitlines():
        if not line.strip() or line[0].isspace():
            continue
        modules = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        layers.append({module_of(part) for part in modules.split("|")})
    return layers


def test_the_map_draws_the_layers_of_the_contract() -> None:
    assert map_layers(ARCHITECTURE.read_text(encoding="utf-8")) == contract_layers()


def test_the_map_names_every_contract() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [c["name"] for c in contracts() if c["name"] not in text]
    assert missing == []


def test_the_map_names_every_home_of_a_protocol() -> None:
    """Each package of `protocol/`, `backends/`, `devserver/`, `conformance/` and `ui/` (a
    protocol's home, or what they share) is in the map, as `protocol/minara/`."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    homes = [
        f"{layer}/{package.name}/"
        for layer in ("protocol", "backends", "devserver", "conformance", "ui")
        for package in sorted((ROOT / PACKAGE / layer).iterdir())
        if (package / "__init__.py").is_file()
    ]
    assert homes and [home for home in homes if home not in text] == []


def test_every_path_the_map_names_exists() -> None:
    """A path in backticks (`ui/chat/screen.py`, `tests/behaviour/`) is in the package or the
    repository; one with a placeholder (`backends/<p>/`) or a pattern (`test_minara_*`) is not
    a path."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"`([^`\s<*]+/[^`\s<*]*)`", text)) - {"talkie/1"})
    missing = [
        path
        for path in named
        if not (ROOT / PACKAGE / path).exists() and not (ROOT / path).exists()
    ]
    assert named
    assert missing == [], "the map names what is not there"


def test_the_readme_links_the_map() -> None:
    assert "](docs/ARCHITECTURE.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def tracked_files() -> list[Path]:
    """Every file git tracks in the repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
    )
    return [ROOT / name for name in listed.stdout.split("\0") if name]


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file (or one deleted but not yet committed)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def references_outside(files: Sequence[Path], root: Path = ROOT) -> Iterator[str]:
    """`path:line: text` for each line that names a file outside the repository `root`, and
    each Markdown link that leads out of it or to nothing."""
    for path in files:
        text = text_of(path)
        if text is None:
            continue
        where = path.relative_to(root)
        for number, line in enumerate(text.splitlines(), start=1):
            if OUTSIDE.search(line):
                yield f"{where}:{number}: {line.strip()}"
        if path.suffix != ".md":
            continue
        for target in MARKDOWN_LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
                continue  # a URL or an anchor of the same page
            resolved = (path.parent / target.split("#")[0]).resolve()
            if not resolved.is_relative_to(root) or not resolved.exists():
                yield f"{where}: link to {target}"


def test_nothing_refers_to_a_file_outside_the_repository() -> None:
    assert list(references_outside(tracked_files())) == []


def test_an_outside_reference_is_found(tmp_path: Path) -> None:
    """The check above can fail: it sees each kind of reference it looks for."""
    lines = [
        "See ../" + "shared/DESIGN" + ".md for the design.",
        "Kept at /work" + "/shared/spec.",
        "[the design](../../elsewhere.md), [no such file](none.md), [this one](probe.md).",
        "Not these: ../../shared.sqlite3, https://example.com/x, [here](#keys).",
    ]
    (tmp_path / "docs").mkdir()
    note = tmp_path / "docs" / "probe.md"
    note.write_text("\n".join(lines), encoding="utf-8")
    code = tmp_path / "code.py"
    code.write_text("# [not a Markdown file](../../x.md)\n", encoding="utf-8")
    assert list(references_outside([note, code], root=tmp_path)) == [
        "docs/probe.md:1: " + lines[0],
        "docs/probe.md:2: " + lines[1],
        "docs/probe.md: link to ../../elsewhere.md",
        "docs/probe.md: link to none.md",
    ]


def import_loops(imports: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(sorted(imports[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(imports.get(target, ())))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    loops.append(sorted(component))
    return sorted(loops)


def package_imports() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports.

    Imports under `if TYPE_CHECKING:` count: a part that names the part above it only for its
    type still knows it (the loop is in the design, even when Python never runs it). A package's
    `__init__` that imports its own child counts too: were the child to import the package
    back, Python would run into a half-initialised package, a real loop.
    """
    graph = grimp.build_graph(PACKAGE, include_external_packages=False, cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def test_no_import_loops() -> None:
    loops = import_loops(package_imports())
    assert loops == [], "import loops:\n" + "\n".join(" ↔ ".join(loop) for loop in loops)


def test_a_loop_is_found() -> None:
    """The search above can fail: a loop of three, beside a chain and a self-import."""
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"e"}, "f": set()}
    assert import_loops(imports) == [["a", "b", "c"]]


def test_the_chat_screen_stays_small() -> None:
    lines = len(CHAT_SCREEN.read_text(encoding="utf-8").splitlines())
    assert lines < MAX_CHAT_SCREEN_LINES, f"ui/chat/screen.py has {lines} lines"


def test_no_module_is_too_long() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / PACKAGE).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, "over 500 lines:\n" + "\n".join(f"{n:5} {p}" for p, n in long.items())
