"""The open stream sockets of a gateway, which test mode's `drop_sockets` cuts."""

from __future__ import annotations

import logging
from typing import Protocol

logger = logging.getLogger(__name__)


class Abortable(Protocol):
    """An open socket that can be cut without a close frame."""

    def abort(self) -> bool:
        """Cut the connection; whether it could be."""
        ...


class SocketRegistry:
    """The open sockets (for test mode's `drop_sockets`)."""

    def __init__(self) -> None:
        self._sockets: set[Abortable] = set()

    def add(self, socket: Abortable) -> None:
        """Track an open socket."""
        self._sockets.add(socket)

    def discard(self, socket: Abortable) -> None:
        """Forget a closed socket."""
        self._sockets.discard(socket)

    def drop_all(self) -> int:
        """Abort every open socket (TCP cut, no close frame); how many were dropped."""
        dropped = 0
        for socket in list(self._sockets):
            if socket.abort():
                dropped += 1
            else:
                logger.warning("a socket could not be aborted")
        return dropped
