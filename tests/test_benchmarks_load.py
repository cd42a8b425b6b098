"""Every benchmark still loads: the names it takes from talkie exist (a benchmark is run by
hand, rarely, so a rename in the package would otherwise break it unseen). Loading only, never
a timing: the figures are the benchmarks' own, printed when they run."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = {"httpx_ask"}
"""Yardsticks that do their work as they load (twenty lines, no `main`): compiled only."""


@pytest.fixture
def benchmarks_importable() -> Iterator[None]:
    """The benchmarks' folder on the path, as when one runs (they import each other)."""
    sys.path.insert(0, str(BENCHMARKS))
    yield
    sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize("name", sorted(path.stem for path in BENCHMARKS.glob("*.py")))
@pytest.mark.usefixtures("benchmarks_importable")
def test_the_benchmark_loads(name: str) -> None:
    if name in SCRIPTS:
        source = (BENCHMARKS / f"{name}.py").read_text(encoding="utf-8")
        compile(source, name, "exec")
        return
    module = importlib.import_module(name)
    assert module.__doc__, f"benchmarks/{name}.py says what it measures"
