"""The key bar at the bottom, without Textual's slow leak of old keys."""

from __future__ import annotations

from textual.widgets import Footer

__all__ = ["TalkieFooter"]


class TalkieFooter(Footer):
    """Textual's Footer, forgetting the keys it replaced.

    Footer rebuilds its keys whenever the bindings change (every run, every focus change), and
    each key watches the footer's `compact` through `data_bind`. Textual drops such a watcher
    only when the watched value changes, which `compact` never does, so every key ever shown
    stayed reachable (about 8 widgets per run: Textual issue #6666). After each rebuild the
    watchers of removed keys are dropped here. `benchmarks/soak.py --tui` measures the effect.
    """

    async def recompose(self) -> None:
        """Rebuild the keys, then forget the watchers of the keys that were removed."""
        await super().recompose()
        # Textual keeps watchers in this attribute of the watched object (reactive.py `_watch`).
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for watching in watchers.values():
            watching[:] = [
                (node, callback)
                for node, callback in watching
                if not getattr(node, "_closing", False) and getattr(node, "is_attached", True)
            ]
