"""The loopback receiver (RFC 8252 §7.3, §8.3) over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from talkie_tui.auth.loopback import CallbackOutcome, LoopbackReceiver

ACCEPT = CallbackOutcome(True, "You are signed in.", finished=True)


async def test_it_listens_on_127_0_0_1_on_a_free_port_and_names_the_literal() -> None:
    async with LoopbackReceiver(lambda url: ACCEPT) as receiver:
        assert receiver.port > 0
        assert receiver.redirect_uri == f"http://127.0.0.1:{receiver.port}/callback"
        sockets = receiver._server.sockets  # type: ignore[union-attr]
        assert {s.getsockname()[0] for s in sockets} == {"127.0.0.1"}


async def test_only_get_callback_is_served() -> None:
    seen: list[str] = []

    def handle(url: str) -> CallbackOutcome:
        seen.append(url)
        return ACCEPT

    async with LoopbackReceiver(handle) as receiver, httpx.AsyncClient() as http:
        base = f"http://127.0.0.1:{receiver.port}"
        assert (await http.get(f"{base}/favicon.ico")).status_code == 404
        assert (await http.get(f"{base}/")).status_code == 404
        assert (await http.get(f"{base}/callbackx?code=1")).status_code == 404
        assert (await http.post(f"{base}/callback?code=1")).status_code == 405
        assert receiver.listening and seen == []
        response = await http.get(f"{base}/callback?code=abc&state=s")
        assert response.status_code == 200
        assert seen == [f"{base}/callback?code=abc&state=s"]
        await asyncio.wait_for(receiver.wait_finished(), 5)
        assert not receiver.listening
        with pytest.raises(httpx.ConnectError):
            await http.get(f"{base}/callback?code=again")


async def test_the_page_is_static_escaped_and_not_cached() -> None:
    hostile = '<script>alert("x")</script>'
    failure = CallbackOutcome(False, hostile, finished=True)
    async with LoopbackReceiver(lambda url: failure) as rx, httpx.AsyncClient() as http:
        response = await http.get(f"http://127.0.0.1:{rx.port}/callback?error=x")
    assert response.status_code == 400
    assert "<script>" not in response.text and "&lt;script&gt;" in response.text
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["content-type"].startswith("text/html")
    assert "src=" not in response.text and "href=" not in response.text  # no external resources


async def test_an_unfinished_outcome_keeps_listening() -> None:
    outcomes = iter([CallbackOutcome(False, "wrong state", finished=False), ACCEPT])
    async with LoopbackReceiver(lambda url: next(outcomes)) as receiver:
        async with httpx.AsyncClient() as http:
            first = await http.get(f"http://127.0.0.1:{receiver.port}/callback?state=old")
            assert first.status_code == 400 and receiver.listening
            second = await http.get(f"http://127.0.0.1:{receiver.port}/callback?state=new")
            assert second.status_code == 200
        await asyncio.wait_for(receiver.wait_finished(), 5)


async def test_garbage_and_silent_clients_do_not_break_it() -> None:
    async with LoopbackReceiver(lambda url: ACCEPT) as receiver:
        for payload in (b"\x16\x03\x01garbage\r\n\r\n", b"GET\r\n\r\n", b"x" * 40000):
            answer = await asyncio.to_thread(_send_raw, receiver.port, payload)
            assert b"Signed in" not in answer  # a 404/431 or nothing; never a sign-in page
        assert receiver.listening
        async with httpx.AsyncClient() as http:
            ok = await http.get(f"http://127.0.0.1:{receiver.port}/callback?code=c")
        assert ok.status_code == 200


async def test_close_is_idempotent_and_frees_the_port() -> None:
    receiver = LoopbackReceiver(lambda url: ACCEPT)
    await receiver.start()
    port = receiver.port
    await receiver.close()
    await receiver.close()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def _send_raw(port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(payload)
        raw.shutdown(socket.SHUT_WR)
        raw.settimeout(15)
        try:
            return raw.recv(1000)
        except ConnectionError:
            return b""
