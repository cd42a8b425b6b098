"""One client socket per hub, shared: every listener (a send, a session kept live, the
backend's `live()`) gets its own queue of what the socket yields.

The socket is opened on the first subscription and stays open until the backend closes (the
app wants live news while it runs). A `ReadyPush` says it is up (again); `SocketLost` that it
is reconnecting. A refusal that retrying cannot mend (the session token refused) ends it: every
listener, present and future, gets that error, until `reset()` (a new token).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Final

from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.cuckoo.pushes import ReadyPush
from talkie_tui.protocol.cuckoo.socket import ClientSocket, SocketItem, SocketLost, SocketResumed

__all__ = ["END", "Feed", "FeedItem", "Subscription"]


class _End:
    """The feed ended (closed), or a listener was told to stop."""

    def __repr__(self) -> str:
        return "END"


END: Final = _End()

FeedItem = SocketItem | TalkieError | _End
"""What a listener receives: a push, a loss or a resumption, the error that ended the socket,
or END."""


class Subscription:
    """One listener's queue. `accept` decides, as each item arrives, whether it is queued."""

    def __init__(self, feed: Feed, accept: Callable[[SocketItem], bool] | None) -> None:
        self._feed = feed
        self._accept = accept
        self._queue: asyncio.Queue[FeedItem] = asyncio.Queue()

    def put(self, item: FeedItem) -> None:
        """Queue `item` (a push only when `accept` takes it; ends and errors always)."""
        if (
            self._accept is not None
            and not isinstance(item, TalkieError | _End)
            and not self._accept(item)
        ):
            return
        self._queue.put_nowait(item)

    def put_end(self) -> None:
        """Wake the listener with END (it stops waiting)."""
        self._queue.put_nowait(END)

    async def get(self, timeout: float | None = None) -> FeedItem | None:  # noqa: ASYNC109
        """The next item, or None when `timeout` seconds pass without one."""
        if timeout is not None and timeout <= 0:
            try:
                return self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return None
        try:
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except TimeoutError:
            return None

    def close(self) -> None:
        """Stop listening."""
        self._feed.discard(self)

    async def items(self) -> AsyncGenerator[SocketItem, None]:
        """What is queued, as it comes, until END (the error that ended the socket is
        raised); listening stops when the iteration does."""
        try:
            while True:
                item = await self.get()
                if item is None or isinstance(item, _End):
                    return  # END (no timeout was given: None never comes)
                if isinstance(item, TalkieError):
                    raise item
                yield item
        finally:
            self.close()


class Feed:
    """The hub's client socket, made by `make_socket` when first needed, fanned out."""

    def __init__(self, make_socket: Callable[[], ClientSocket]) -> None:
        self._make_socket = make_socket
        self._socket: ClientSocket | None = None
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Subscription] = []
        self._ready: asyncio.Event | None = None
        self._watched: Counter[str] = Counter()
        self.error: TalkieError | None = None
        self.lost = False
        self.closed = False

    # --- listening -----------------------------------------------------------------------

    def subscribe(self, accept: Callable[[SocketItem], bool] | None = None) -> Subscription:
        """A new listener; the socket opens now if it is not open."""
        subscription = Subscription(self, accept)
        self._listeners.append(subscription)
        if self.error is not None:
            subscription.put(self.error)
        elif self.closed:
            subscription.put(END)
        else:
            self._start()
        return subscription

    def discard(self, subscription: Subscription) -> None:
        """Stop giving items to `subscription`."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(subscription)

    @contextlib.contextmanager
    def watching(self, conversation_id: str | None) -> Iterator[None]:
        """While inside, `conversation_id` is shown by a session (its news is not news
        "elsewhere")."""
        if conversation_id is None:
            yield
            return
        self._watched[conversation_id] += 1
        try:
            yield
        finally:
            self._watched[conversation_id] -= 1
            if self._watched[conversation_id] <= 0:
                del self._watched[conversation_id]

    def is_watched(self, conversation_id: str) -> bool:
        """True while a session follows `conversation_id`."""
        return self._watched[conversation_id] > 0

    async def wait_ready(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Wait until the socket said `ready` (True), at most `timeout` seconds."""
        self._start()
        ready = self._ready_event()
        if ready.is_set():
            return True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await ready.wait()
        return ready.is_set()

    @property
    def state(self) -> str:
        """The socket's state: idle, connecting, open, reconnecting or closed."""
        return self._socket.state if self._socket is not None else "idle"

    # --- the socket ----------------------------------------------------------------------

    def _ready_event(self) -> asyncio.Event:
        if self._ready is None:
            self._ready = asyncio.Event()
        return self._ready

    def _start(self) -> None:
        if self._task is not None or self.closed or self.error is not None:
            return
        self._socket = self._make_socket()
        self._task = asyncio.get_running_loop().create_task(self._run(self._socket))

    def _give(self, item: FeedItem) -> None:
        for listener in list(self._listeners):
            listener.put(item)

    async def _run(self, socket: ClientSocket) -> None:
        ready = self._ready_event()
        try:
            async for item in socket:
                if isinstance(item, ReadyPush):
                    ready.set()
                    self.lost = False
                elif isinstance(item, SocketLost):
                    ready.clear()
                    self.lost = True
                elif isinstance(item, SocketResumed):
                    self.lost = False
                self._give(item)
        except TalkieError as error:
            self.error = error
            ready.clear()
            self._give(error)
            return
        ready.clear()
        self._give(END)

    async def reset(self) -> None:
        """Close the socket (a new token: the next listener opens a new one)."""
        await self._stop()
        self.error = None
        self.lost = False

    async def aclose(self) -> None:
        """Close the socket; every listener gets END."""
        self.closed = True
        await self._stop()
        self._give(END)

    async def _stop(self) -> None:
        socket, task = self._socket, self._task
        self._socket, self._task = None, None
        if socket is not None:
            await socket.aclose()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._ready is not None:
            self._ready.clear()
