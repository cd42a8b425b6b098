"""No import loops in the reference servers, the bridge and the wire clients: each part gets
what it needs passed in and tells the part above it by a callback, never by importing it back
(not even for type checking)."""

from __future__ import annotations

import grimp

PACKAGES = ("talkie_tui.devserver", "talkie_tui.bridge", "talkie_tui.protocol")


def _loops(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The groups of modules that reach each other (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module) & modules:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                loops.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return loops


def test_no_module_reaches_back() -> None:
    graph = grimp.build_graph("talkie_tui")
    modules = {module for module in graph.modules if module.startswith(PACKAGES)}
    assert _loops(graph, modules) == []
