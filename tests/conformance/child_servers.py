"""Reference servers and the broken proxies in front of them, each served from a child process.

The broken-server tests run some thirty conformance runs at once. With the servers and proxies
in threads of the test's own process, all of them and the checks take turns on one GIL; in
child processes (the servers in one, the proxies in another) they run on other cores. A child
serves until the test closes its pipe (or dies).
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from multiprocessing.connection import Connection
from typing import ClassVar, Protocol

from starlette.types import ASGIApp

from tests.stub_server import UVICORN_PINGS, StubServer

START_WAIT = 60.0
STOP_WAIT = 15.0

# What a child serves: a context manager of the URLs by name (picklable: a module-level
# function, or a functools.partial of one).
Serve = Callable[[], AbstractContextManager[dict[str, str]]]


@contextmanager
def served_in_child(serve: Serve) -> Iterator[dict[str, str]]:
    """Run `serve` in a child process; yield the URLs it serves, by name."""
    context = multiprocessing.get_context("spawn")  # this process has threads: no fork
    parent, child = context.Pipe()
    process = context.Process(target=_serve_until_told, args=(serve, child), daemon=True)
    process.start()
    child.close()
    try:
        if not parent.poll(START_WAIT):
            raise RuntimeError(f"the child's servers did not start within {START_WAIT:g} s")
        try:
            urls: dict[str, str] = parent.recv()
        except EOFError:
            raise RuntimeError("the child's servers failed to start (see its stderr)") from None
        yield urls
    finally:
        parent.close()  # the child's recv ends: it stops its servers and exits
        process.join(STOP_WAIT)
        if process.is_alive():
            process.kill()
            process.join()


def _serve_until_told(serve: Serve, connection: Connection) -> None:
    with serve() as urls:
        connection.send(urls)
        with suppress(EOFError):  # the parent closed the pipe
            connection.recv()


class Breakage(Protocol):
    """A broken proxy's class: its name, and its app in front of an upstream server (one whose
    server pings its sockets on a schedule of its own says so in `pings`, as `StubServer`
    takes it)."""

    name: ClassVar[str]

    def __init__(self, upstream: str) -> None: ...

    def app(self) -> ASGIApp: ...


def proxies(upstream: str | Mapping[str, str], breakages: Iterable[type[Breakage]]) -> Serve:
    """What a child serves: each breakage in front of `upstream` (one for all, or one each by
    breakage name), on 127.0.0.1."""
    return functools.partial(_proxies, upstream, tuple(breakages))


@contextmanager
def _proxies(
    upstream: str | Mapping[str, str], breakages: tuple[type[Breakage], ...]
) -> Iterator[dict[str, str]]:
    stubs: dict[str, StubServer] = {}
    try:
        for breakage in breakages:
            behind = upstream if isinstance(upstream, str) else upstream[breakage.name]
            pings = getattr(breakage, "pings", UVICORN_PINGS)
            stubs[breakage.name] = StubServer(breakage(behind).app(), pings=pings).start()
        yield {name: stub.origin for name, stub in stubs.items()}
    finally:
        for stub in stubs.values():  # all at once, then wait for each
            stub.ask_to_stop()
        for stub in stubs.values():
            stub.join()
