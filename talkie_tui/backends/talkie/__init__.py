"""The talkie/1 backend: `TalkieBackend` over a `TalkieClient`, its chat sessions and reducer."""

from .backend import TalkieBackend, server_info

__all__ = ["TalkieBackend", "server_info"]
