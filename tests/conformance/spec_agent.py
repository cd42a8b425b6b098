"""A Cuckoo agent backend written from `cuckoo-agent.md` alone (websockets + httpx, through
tests/cuckoo_peer/agent.py), run as `python -m tests.conformance.spec_agent [--break WAY]`
with `CUCKOO_HUB` and `CUCKOO_SECRET` in its environment, as `talkie conformance agent` runs it.

It streams its answer word by word and ends it with a button; a tap is answered in one message;
`stop.requested` ends the stream (a later append's 409 is taken calmly); events are handled once
per id and acknowledged after the work. `--break WAY` breaks exactly one of those promises.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
from typing import Any
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route

from tests.cuckoo_peer import agent as peer
from tests.cuckoo_peer.agent import AgentBackend

WORDS = ["A", "calm", "answer", "from", "the", "spec", "agent,", "word", "by", "word."]
BREAKS = (
    "silent",  # never answers
    "never-acks",  # answers but acknowledges nothing
    "answers-twice",  # a redelivered event is answered again
    "ignores-taps",  # a tap gets no answer
    "crashes-on-newcomer",  # a conversation.joined after the first answer ends the process
    "dies-on-stop",  # a refused append after a stop ends the process
    "no-reconnect",  # a dropped socket ends the process
    "never-connects",  # runs, but never opens its socket (or, --webhook, never listens)
    "acks-on-receipt",  # acknowledges an event before the work, so a crash would lose it
    "crashes-on-left",  # a conversation.left ends the process
    "refuses-joins",  # (--webhook) a conversation.joined is answered 500
    "ignores-signature",  # (--webhook) any signature is taken
    "accepts-stale",  # (--webhook) a timestamp however old is taken
)


class SpecAgent(AgentBackend):
    """The agent, with one promise broken when `broken` says so."""

    def __init__(self, hub: str, secret: str, broken: str | None) -> None:
        super().__init__(
            hub,
            secret,
            handler=SpecAgent.on_event,
            ack=broken != "never-acks",
            reconnect=broken != "no-reconnect",
        )
        self.broken = broken
        self.has_answered = False  # someone joining later is a newcomer

    async def _handle(self, event: dict[str, Any]) -> None:
        if self.broken == "answers-twice":
            self.handled.pop(event["id"], None)
        if self.broken == "acks-on-receipt":
            await self.ack(event["id"])
        await super()._handle(event)

    async def on_event(self, event: dict[str, Any]) -> None:
        kind, data = event["type"], event["data"]
        newcomer = kind == "conversation.joined" and self.has_answered
        if newcomer and self.broken == "crashes-on-newcomer":
            os._exit(3)
        if kind == "conversation.left" and self.broken == "crashes-on-left":
            os._exit(6)
        if kind == "conversation.joined" and self.broken == "refuses-joins":
            raise RuntimeError("joins are not handled")  # the receiver answers 500
        if kind != "message.created" or self.broken == "silent":
            return
        conversation = data["conversation"]["id"]
        body = data["message"].get("body") or {}
        if "action" in body:
            if self.broken != "ignores-taps":
                await self.http.post(
                    f"/v1/agent/conversations/{conversation}/messages",
                    json={"text": f"You chose {body.get('text')}."},
                )
            return
        await self.stream_answer(conversation)

    async def stream_answer(self, conversation: str) -> None:
        self.has_answered = True
        started = await self.http.post(
            f"/v1/agent/conversations/{conversation}/messages", json={"stream": True}
        )
        message_id = started.json()["message"]["id"]
        for word in WORDS:
            appended = await self.http.post(
                f"/v1/agent/messages/{message_id}/append", json={"text": word + " "}
            )
            if appended.status_code == 409:  # stopped by the person: the reply is finished
                if self.broken == "dies-on-stop":
                    os._exit(4)
                return
            await asyncio.sleep(0.08)
        await self.http.post(
            f"/v1/agent/messages/{message_id}/finish",
            json={"buttons": [[{"id": "more", "label": "Tell me more"}]]},
        )


class Forgetful(set[str]):
    """The ids of handled events, forgotten at once (so a redelivery is handled again)."""

    def add(self, element: str) -> None:
        pass


async def serve_webhook(agent: SpecAgent) -> int:
    """Take the hub's posts at $CUCKOO_WEBHOOK_URL (on $PORT), checked, and answer them."""
    if agent.broken == "ignores-signature":
        peer.verify_webhook = lambda *args, **kwargs: True
    elif agent.broken == "accepts-stale":
        checked = peer.verify_webhook
        peer.verify_webhook = functools.partial(checked, tolerance=10**9)
    receiver = peer.WebhookReceiver(handler=functools.partial(SpecAgent.on_event, agent))
    receiver.secret = agent.secret
    if agent.broken == "answers-twice":
        receiver.handled = Forgetful()
    path = urlsplit(os.environ["CUCKOO_WEBHOOK_URL"]).path
    app = Starlette(routes=[Route(path, receiver._hook, methods=["POST"])])
    port = int(os.environ["PORT"])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    await uvicorn.Server(config).serve()
    return 0


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--break", dest="broken", choices=BREAKS)
    parser.add_argument("--webhook", action="store_true", help="take the hub's posts on $PORT")
    args = parser.parse_args()
    agent = SpecAgent(os.environ["CUCKOO_HUB"], os.environ["CUCKOO_SECRET"], args.broken)
    if args.broken == "never-connects":
        await asyncio.Event().wait()  # alive, and unreachable until it is ended
    if args.webhook:
        return await serve_webhook(agent)
    await agent.connect()
    while agent.final is None:  # 4001 or 4002: final, never retried
        await asyncio.sleep(0.2)
        if not agent.reconnect and not agent.connected:
            return 5
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
