"""The `/v1/stream` socket: subscribed, event frames with seq across turns, replay, several
subscribers, control frames, errors, keepalive and idle close, buffer retention, drop_sockets."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.devserver.minara.wire import Socket, run_turn, start_turn, types_of, wait_until_idle
from tests.helpers import AUTH, TEST_TOKEN


def test_subscribed_then_every_event_of_the_turn_in_seq_order(
    http: httpx.Client, fast_url: str
) -> None:
    session_id = start_turn(http, fast_url, "minara-test:echo hello world")["session_id"]
    wait_until_idle(http, fast_url, session_id)
    with Socket(fast_url) as socket:
        subscribed = socket.subscribe(session_id)
        assert subscribed == {
            "type": "subscribed",
            "channel": "chat",
            "key": session_id,
            "firstSeq": 1,
            "lastSeq": 5,
        }
        frame = socket.recv()
        assert frame == {
            "type": "event",
            "channel": "chat",
            "key": session_id,
            "seq": 1,
            "event": frame["event"],
        }
        assert frame["event"]["type"] == "start"
        rest = socket.events(session_id)
    assert [seq for seq, _ in rest] == [2, 3, 4, 5]
    assert types_of(rest) == ["text_delta"] * 3 + ["done"]


def test_a_second_turn_continues_the_seq_and_drops_the_first_buffer(
    http: httpx.Client, fast_url: str
) -> None:
    session_id, first = run_turn(http, fast_url, "minara-test:count 3")
    assert [seq for seq, _ in first] == [1, 2, 3, 4, 5]
    start_turn(http, fast_url, "minara-test:count 2", session_id=session_id)
    wait_until_idle(http, fast_url, session_id)
    with Socket(fast_url) as socket:
        subscribed = socket.subscribe(session_id, from_seq=0)
        assert (subscribed["firstSeq"], subscribed["lastSeq"]) == (6, 9)
        second = socket.events(session_id)
    assert [seq for seq, _ in second] == [6, 7, 8, 9]
    assert second[0][1]["type"] == "start"
    assert session_id_last_seq(http, fast_url, session_id) == 9


def session_id_last_seq(http: httpx.Client, url: str, session_id: str) -> int:
    return int(http.get(f"{url}/v1/sessions/{session_id}", headers=AUTH).json()["last_seq"])


def test_from_seq_replays_only_what_came_after(http: httpx.Client, fast_url: str) -> None:
    session_id, events = run_turn(http, fast_url, "minara-test:count 4")
    with Socket(fast_url) as socket:
        socket.subscribe(session_id, from_seq=3)
        replay = socket.events(session_id)
    assert replay == events[3:]


def test_a_reconnect_mid_turn_misses_nothing_and_repeats_nothing(
    http: httpx.Client, fast_url: str
) -> None:
    session_id = start_turn(http, fast_url, "minara-test:count 12 40")["session_id"]
    seen: list[tuple[int, dict]] = []
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        for _ in range(4):
            seen.append(socket.next_event(session_id))
    with Socket(fast_url) as socket:
        socket.subscribe(session_id, from_seq=seen[-1][0])
        seen.extend(socket.events(session_id))
    assert [seq for seq, _ in seen] == list(range(1, 15))
    texts = [event["data"]["text"] for _, event in seen if event["type"] == "text_delta"]
    assert texts == [f"{n} " for n in range(1, 13)]


def test_two_subscribers_both_receive_every_event(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:count 6 20")["session_id"]
    with Socket(fast_url) as one, Socket(fast_url) as two:
        one.subscribe(session_id)
        two.subscribe(session_id)
        assert one.events(session_id) == two.events(session_id)


def test_one_socket_follows_several_sessions(http: httpx.Client, fast_url: str) -> None:
    first = start_turn(http, fast_url, "minara-test:echo one")["session_id"]
    second = start_turn(http, fast_url, "minara-test:echo two")["session_id"]
    with Socket(fast_url) as socket:
        for key in (first, second):
            socket.send({"type": "subscribe", "channel": "chat", "key": key, "fromSeq": 0})
        frames = [socket.recv() for _ in range(12)]
    assert sorted(frame["key"] for frame in frames if frame["type"] == "subscribed") == sorted(
        [first, second]
    )
    frames = [frame for frame in frames if frame["type"] == "event"]
    for key in (first, second):
        seqs = [frame["seq"] for frame in frames if frame["key"] == key]
        assert seqs == [1, 2, 3, 4, 5]


def test_unsubscribe_stops_the_events(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:endless")["session_id"]
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        socket.next_event(session_id)
        socket.send({"type": "unsubscribe", "channel": "chat", "key": session_id})
        socket.send({"type": "ping"})
        # Frames queued before the unsubscribe may still come; after the pong none may.
        while socket.recv()["type"] != "pong":
            pass
        http.post(f"{fast_url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
        wait_until_idle(http, fast_url, session_id)
        socket.send({"type": "ping"})
        assert socket.recv() == {"type": "pong"}


def test_ping_gets_pong(fast_url: str) -> None:
    with Socket(fast_url) as socket:
        socket.send({"type": "ping"})
        assert socket.recv() == {"type": "pong"}


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ("not json", "JSON"),
        ("[1, 2]", "type"),
        ('{"type": "dance"}', "dance"),
        ('{"type": "subscribe", "channel": "chat"}', "key"),
        ('{"type": "subscribe", "channel": "chat", "key": "k", "fromSeq": -1}', "fromSeq"),
        ('{"type": "subscribe", "channel": "chat", "key": "k", "fromSeq": "3"}', "fromSeq"),
    ],
)
def test_a_bad_frame_gets_a_bad_frame_error_and_the_socket_stays(
    fast_url: str, frame: str, words: str
) -> None:
    with Socket(fast_url) as socket:
        socket.ws.send(frame)
        error = socket.recv()
        assert error["type"] == "error" and error["code"] == "bad_frame"
        assert words in error["message"]
        socket.send({"type": "ping"})
        assert socket.recv() == {"type": "pong"}


def test_a_binary_frame_is_a_bad_frame(fast_url: str) -> None:
    with Socket(fast_url) as socket:
        socket.ws.send(b'{"type": "ping"}')
        assert socket.recv()["code"] == "bad_frame"


def test_a_frame_over_1_mib_is_a_bad_frame(fast_url: str) -> None:
    with Socket(fast_url) as socket:
        socket.ws.send(json.dumps({"type": "ping", "pad": "x" * (1024 * 1024)}))
        error = socket.recv()
        assert error["code"] == "bad_frame" and "1048576" in error["message"]
        # Just under the limit is a frame like any other.
        socket.ws.send(json.dumps({"type": "ping", "pad": "x" * (1024 * 1024 - 40)}))
        assert socket.recv() == {"type": "pong"}


def test_subscribing_an_unknown_session_or_channel_is_not_found(fast_url: str) -> None:
    with Socket(fast_url) as socket:
        socket.send({"type": "subscribe", "channel": "chat", "key": "chat_nope", "fromSeq": 0})
        error = socket.recv()
        assert error["type"] == "error" and error["code"] == "not_found"
        assert (error["channel"], error["key"]) == ("chat", "chat_nope")
        socket.send({"type": "subscribe", "channel": "goal", "key": "chat_nope", "fromSeq": 0})
        assert socket.recv()["code"] == "not_found"


def test_an_empty_session_subscribes_with_nothing_buffered(
    http: httpx.Client, fast_url: str
) -> None:
    created = http.post(f"{fast_url}/v1/sessions", json={"title": "Empty"}, headers=AUTH).json()
    with Socket(fast_url) as socket:
        subscribed = socket.subscribe(created["data"]["id"])
    assert (subscribed["firstSeq"], subscribed["lastSeq"]) == (1, 0)


def test_deleting_a_session_tells_its_subscribers(http: httpx.Client, fast_url: str) -> None:
    session_id = start_turn(http, fast_url, "minara-test:endless")["session_id"]
    with Socket(fast_url) as socket:
        socket.subscribe(session_id)
        socket.next_event(session_id)
        assert http.delete(f"{fast_url}/v1/sessions/{session_id}", headers=AUTH).json() == {
            "ok": True
        }
        while (frame := socket.recv())["type"] == "event":
            pass
        assert frame["type"] == "error" and frame["code"] == "not_found"
        assert frame["key"] == session_id


def test_the_server_pings_and_closes_a_silent_socket(
    minara_gateway: Callable[..., str],
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN, ping_interval=0.05, idle_timeout=0.6)
    pings = 0
    with Socket(url, keep_pings=True) as socket, pytest.raises(ConnectionClosed) as closed:
        while True:
            assert socket.recv(timeout=3) == {"type": "ping"}
            pings += 1
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408
    # Closed once silent for idle_timeout, not at the first ping: counted in pings (about 11
    # of them; a busy machine may skip some), not timed.
    assert pings >= 3


def test_answering_pong_keeps_the_socket_open(minara_gateway: Callable[..., str]) -> None:
    # Twenty pings answered span twice the idle timeout; the timeout is long enough that a
    # busy machine's late pong does not count as silence.
    url = minara_gateway(auth_token=TEST_TOKEN, ping_interval=0.1, idle_timeout=1.0)
    with Socket(url, keep_pings=True) as socket:
        for _ in range(20):
            assert socket.recv(timeout=5) == {"type": "ping"}
            socket.send({"type": "pong"})
        socket.send({"type": "ping"})
        while (frame := socket.recv(timeout=5)) == {"type": "ping"}:
            pass
        assert frame == {"type": "pong"}


def test_a_finished_turn_stays_replayable_for_the_buffer_time_then_goes(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN, turn_buffer_seconds=0.5)
    session_id, _ = run_turn(http, url, "minara-test:echo kept")
    with Socket(url) as socket:
        assert socket.subscribe(session_id)["firstSeq"] == 1
    time.sleep(0.6)
    with Socket(url) as socket:
        subscribed = socket.subscribe(session_id)
        assert (subscribed["firstSeq"], subscribed["lastSeq"]) == (6, 5)
        socket.send({"type": "ping"})
        assert socket.recv() == {"type": "pong"}  # and no events replayed before it


def test_the_default_buffer_time_is_five_minutes() -> None:
    from talkie_tui.devserver.minara.config import GatewayConfig

    config = GatewayConfig()
    assert config.turn_buffer_seconds == 300
    assert (config.ping_interval, config.idle_timeout) == (20, 60)


def test_drop_sockets_cuts_every_socket_without_a_close_frame(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    session_id = start_turn(http, url, "minara-test:echo hi")["session_id"]
    with Socket(url) as one, Socket(url) as two:
        one.subscribe(session_id)
        two.send({"type": "ping"})
        assert two.recv() == {"type": "pong"}
        answer = http.post(f"{url}/v1/_test/drop_sockets", headers=AUTH)
        assert answer.json() == {"dropped": 2}
        for socket in (one, two):
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    socket.recv(timeout=3)
            assert closed.value.rcvd is None  # the TCP connection ended without a close frame
    # A new socket works, and sees the turn again.
    with Socket(url) as again:
        assert again.subscribe(session_id)["lastSeq"] == 5
    # Once the gateway noticed the last close, there is nothing left to drop.
    deadline = time.monotonic() + 5
    while http.post(f"{url}/v1/_test/drop_sockets", headers=AUTH).json() != {"dropped": 0}:
        assert time.monotonic() < deadline
        time.sleep(0.02)
