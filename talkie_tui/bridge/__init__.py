"""Bridges: a Talkie server's agent made a member of another protocol's world.

`talkie bridge cuckoo` (`cuckoo.CuckooBridge`) serves a Cuckoo agent's conversations from a
Talkie server: it is an agent backend on the hub's side and a Talkie client on the other.

Where it sits in the layers: at the level of what `talkie_tui.commands` uses, beside the UI,
the conformance runner and the reference servers. A bridge is a long-running program of its
own rather than a piece of one command: it drives a Talkie server through `talkie_tui.backends`
(the same `Backend` and `Session` the TUI and `talkie ask` use, so runs, cards and actions are
read once, by the backend's reducer), speaks the hub's agent protocol through
`talkie_tui.protocol.cuckoo.agent_client` (the socket and the `/v1/agent` routes) or, for a
webhook binding, a webhook receiver of its own, and keeps its state with
`talkie_tui.config`'s folders. It prints nothing itself and never imports Textual or Rich:
`talkie_tui.commands.bridge` gives it the backend, the lines' destination and the Ctrl+C
handling, and `cli.py` parses the arguments.
"""

from __future__ import annotations

__all__: list[str] = []
