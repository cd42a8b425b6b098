"""`talkie bridge cuckoo`: a Talkie server's agent, serving the conversations of a Cuckoo agent.

The bridge takes the agent's events from the hub and, signed in to the Talkie server as the
operator (a `Backend`), answers each conversation from one Talkie thread. Events come in one of
two ways, as the agent's binding is set up on the hub:

- a socket binding: the bridge holds the agent socket (`AgentLink`, in
  `protocol.cuckoo.agent_client`), acknowledges each event there once its work is done, and
  sends its messages as socket ops (`ops.SocketOps`);
- a webhook binding (`webhook=(host, port)`): the bridge listens for the hub's signed POSTs
  (`webhook.WebhookReceiver`), keeps each event in the state file before answering 2xx (the hub
  wants an answer within 10 s), and sends its messages over HTTP (`ops.HttpOps`).

This module is the event loop both share: events in, one worker per conversation handling its
events in order, acknowledgements, catching up on what was missed, joins and leaves. The work
is elsewhere:

- `answers.Answers`: a person's message answered by a run of the conversation's thread (the
  hub's `msg_` id is the run's message id, so a replay answers nothing twice), a stop, the
  "this agent is private" reply;
- `reply.Reply`: the messages sent for one event — streamed text (a long one in several
  messages, cut at paragraph breaks by `split.Splitter`), cards, actions with Confirm / Cancel;
- `schedules.Schedules`: the schedules people ask the agent for, confirmed and run on time;
- `decisions.Decisions`: a tap on those buttons decides the action (`method: "button"`); a
  confirmed action in its undo window is followed to its end, whose result is sent as a message;
- `conversation.left` ends replies to that conversation.

At least once, handled: an event is acknowledged after its work is done (a webhook's event is
kept pending until then, and done after a restart if need be); every send carries an
idempotency key made from the event id (`evt_…:n`, n counting the reply's messages, which a
replayed run sends in the same order), so a redelivered event finds its messages already made;
handled event ids are kept in the state file, and after a reconnect (or a start, for a webhook)
`/events?since=` the last event up to which all was handled fills any gap.

Only the people allowed (by default the agent's owner) are served, since the bridge acts with
the operator's Talkie identity; anyone else gets one "this agent is private" reply per
conversation.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from talkie_tui.bridge.answers import Answers
from talkie_tui.bridge.context import BridgeContext, Served
from talkie_tui.bridge.decisions import Decisions
from talkie_tui.bridge.greeting import Greeting
from talkie_tui.bridge.ops import HttpOps, HubOps, SocketOps
from talkie_tui.bridge.schedules import EVENTS as SCHEDULE_EVENTS
from talkie_tui.bridge.schedules import Schedules
from talkie_tui.bridge.webhook import WebhookReceiver
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import _, ngettext
from talkie_tui.protocol.cuckoo.agent_client import AgentApi, AgentLink, LinkEnded

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend
    from talkie_tui.bridge.state import BridgeState

__all__ = ["FLUSH_INTERVAL", "CuckooBridge", "Served"]

logger = logging.getLogger(__name__)

FLUSH_INTERVAL = 0.04
"""Seconds between two `stream.delta` frames of one reply (the first goes at once): 25 a
second, so a person's client can draw a streaming answer at 25 frames a second (the goal is at
least 20; at 0.06 it was under 17). The hub allows an agent 200 deltas a second (burst 400),
for all its replies together: eight replies streaming at full speed stay within it. Past that
the hub drops a delta with `rate_limited`, and the reply pauses and sends what the hub lacks
again (`reply.Stream._mend`; over HTTP the append is tried again)."""
WORKER_IDLE = 300.0
"""Seconds a conversation's worker waits for its next event before it ends (a new one starts
with the next event)."""
WEBHOOK_RETRY = 30.0
"""Seconds before a webhook's event whose work failed is tried again (a socket's is sent again
by the hub, 30 s after it was pushed)."""


@dataclass(slots=True)
class _Worker:
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None


class CuckooBridge:
    """Serves a Cuckoo agent's conversations from a Talkie server (see the module docstring)."""

    def __init__(
        self,
        *,
        backend: Backend,
        hub_url: str,
        secret: str,
        open_state: Callable[[str], BridgeState],
        allow: Iterable[str] = (),
        say: Callable[[str], None] = print,
        warn: Callable[[str], None] = print,
        flush_interval: float = FLUSH_INTERVAL,
        backoff: tuple[float, ...] | None = None,
        before_ack: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        api: AgentApi | None = None,
        webhook: tuple[str, int] | None = None,
        webhook_retry: float = WEBHOOK_RETRY,
        greeting: Greeting | None = None,
    ) -> None:
        self.backend = backend
        self.greeting = greeting
        self.hub_url = hub_url
        self.allow = frozenset(allow)
        self.say = say
        self.warn = warn
        self.before_ack = before_ack
        self.api = api or AgentApi(hub_url, secret)
        self.link: AgentLink | None = None
        self.receiver: WebhookReceiver | None = None
        self.ops: HubOps
        self.webhook_retry = webhook_retry
        if webhook is None:
            link_options: dict[str, Any] = {} if backoff is None else {"backoff": backoff}
            self.link = AgentLink(
                hub_url,
                secret,
                self._on_event,
                on_connected=self._connected,
                on_delta_failed=self._delta_failed,
                say=warn,
                **link_options,
            )
            self.ops = SocketOps(self.link)
        else:
            self.receiver = WebhookReceiver(
                *webhook, secret, self._posted, on_ready=self._listening, warn=warn
            )
            self.ops = HttpOps(self.api, on_delta_failed=self._delta_failed)
        self._active: set[str] = set()
        self._order: collections.deque[str] = collections.deque()
        self._workers: dict[str, _Worker] = {}
        self.context = BridgeContext(
            backend=backend,
            ops=self.ops,
            api=self.api,
            open_state=open_state,
            say=say,
            warn=warn,
            flush_interval=flush_interval,
        )
        self.decisions = Decisions(self.context)
        self.answers = Answers(self.context, self.decisions)
        self.schedules = Schedules(self.context, self.answers, self.api)
        self.ready = asyncio.Event()
        self.handled_count = 0

    @property
    def state(self) -> BridgeState:
        """The state file (open once `start` learned the agent's id)."""
        return self.context.state

    @property
    def served(self) -> Served | None:
        """Whom the bridge serves (known once `start` asked the hub)."""
        return self.context.served

    # --- running ------------------------------------------------------------------------

    async def start(self) -> Served:
        """Learn who the agent is (`/me`) and whom it serves."""
        agent = await self.api.me()
        owner = agent.get("owner_id") if isinstance(agent.get("owner_id"), str) else None
        allowed = self.allow or (frozenset({owner}) if owner else frozenset())
        served = Served(
            agent_id=str(agent["id"]),
            handle=clean_text(str(agent.get("handle") or "")),
            display_name=clean_text(str(agent.get("display_name") or "")),
            allowed=allowed,
            owner_id=owner,
        )
        self.context.serve(served)
        return served

    async def run(self) -> None:
        """Serve until cancelled; LinkEnded when the hub ended the agent's socket for good,
        OSError when the webhook's address cannot be listened on."""
        if self.served is None:
            await self.start()
        self.decisions.resume()
        self.context.spawn(self.schedules.run())
        try:
            if self.receiver is not None:
                await self.receiver.run()
            else:
                assert self.link is not None
                await self.link.run()
        finally:
            await self._shut()

    async def _shut(self) -> None:
        tasks = [w.task for w in self._workers.values() if w.task is not None]
        tasks.extend(self.context.tasks)
        for task in tasks:
            task.cancel()
        self.answers.abandon()
        await asyncio.gather(*tasks, return_exceptions=True)
        if isinstance(self.ops, HttpOps):
            await self.ops.aclose()
        if self.link is not None:
            await self.link.close()
        await self.api.aclose()

    # --- events in ----------------------------------------------------------------------

    def _posted(self, event: dict[str, Any]) -> None:
        """An event the hub POSTed to the webhook: kept pending before the hub is told it
        arrived (the 2xx), then handled as a pushed one."""
        if not self.state.is_handled(str(event["id"])):
            self.state.keep_pending(event)
        self._on_event(event)

    def _on_event(self, event: dict[str, Any], *, pushed: bool = True) -> None:
        event_id = str(event["id"])
        if event_id in self._active:
            return  # being handled: acknowledged when done
        if self.state.is_handled(event_id):
            if pushed and self.link is not None:
                self.context.spawn(self._ack(event_id))  # its acknowledgement was lost
            return
        self._active.add(event_id)
        self._order.append(event_id)
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        assert isinstance(data, dict)
        conversation = (
            data.get("conversation") if isinstance(data.get("conversation"), dict) else {}
        )
        assert isinstance(conversation, dict)
        conversation_id = conversation.get("id")
        if not isinstance(conversation_id, str) or not conversation_id:
            self.context.spawn(self._done(event))  # nothing to do with it
            return
        if kind == "stop.requested":
            self.context.spawn(self._handled(event, self.answers.stop(conversation_id)))
            return
        if kind == "conversation.left" and self.state.mark_left(
            conversation_id, event.get("created_at")
        ):
            self.answers.stop_run(conversation_id)  # now, not after the conversation's queue
        worker = self._workers.get(conversation_id)
        if worker is None or worker.task is None or worker.task.done():
            worker = self._workers[conversation_id] = _Worker()
            worker.task = asyncio.ensure_future(self._work(conversation_id, worker))
        worker.queue.put_nowait(event)

    async def _work(self, conversation_id: str, worker: _Worker) -> None:
        """Handle one conversation's events in order; end after a while without any."""
        while True:
            try:
                event = await wait_within(worker.queue.get(), WORKER_IDLE)
            except TimeoutError:
                if worker.queue.empty() and self._workers.get(conversation_id) is worker:
                    del self._workers[conversation_id]
                    return
                continue
            await self._handled(event, self._handle(event))

    async def _handled(self, event: dict[str, Any], work: Awaitable[None]) -> None:
        """Do an event's work, then record and acknowledge it; a failure leaves it unacked
        (the hub sends it again) and says why."""
        try:
            await work
        except (asyncio.CancelledError, LinkEnded):
            self._active.discard(str(event["id"]))
            raise
        except Exception as error:
            self._active.discard(str(event["id"]))
            words = error.message if isinstance(error, TalkieError) else repr(error)
            if self.link is not None:
                again = _("the hub will send it again")
            else:  # a webhook's event: the hub had its 2xx, and it is pending here
                again = _("tried again in {seconds:.0f} s").format(seconds=self.webhook_retry)
                self.context.spawn(self._retry(event))
            self.warn(
                _("could not handle {event} ({type}): {words}; {again}").format(
                    event=event["id"], type=event.get("type"), words=words, again=again
                )
            )
            logger.exception("event %s", event.get("id"))
            return
        await self._done(event)

    async def _retry(self, event: dict[str, Any]) -> None:
        await asyncio.sleep(self.webhook_retry)
        self._on_event(event, pushed=False)

    async def _done(self, event: dict[str, Any]) -> None:
        event_id = str(event["id"])
        if self.before_ack is not None:
            await self.before_ack(event)
        served = self.served
        last = None
        while self._order and (self._order[0] == event_id or self.state.is_handled(self._order[0])):
            last = self._order.popleft()
        cursor = (served.agent_id, last) if last is not None and served is not None else None
        self.state.mark_handled(event_id, cursor)
        self._active.discard(event_id)
        self.handled_count += 1
        await self._ack(event_id)

    async def _ack(self, event_id: str) -> None:
        if self.link is not None:  # a webhook's event was acknowledged by its 2xx
            await self.link.ack(event_id)

    async def _connected(self, reconnected: bool) -> None:
        """The socket is open: say so, and after a drop fill the gap from `?since=`."""
        if self.served is None:
            return
        if reconnected:
            self.warn(_("hub: connected again"))
        else:
            self.say(_("connected to the hub; waiting for messages (Ctrl+C stops)"))
        self.ready.set()
        await self._catch_up()

    async def _listening(self, url: str) -> None:
        """The webhook listens: say where, then do what is pending and what was missed."""
        self.say(
            _(
                "listening for the hub's webhook posts on {url}; "
                "waiting for messages (Ctrl+C stops)"
            ).format(url=url)
        )
        self.ready.set()
        pending = self.state.pending()
        for event in pending:
            self._on_event(event, pushed=False)
        if pending:
            self.say(
                ngettext(
                    "{count} event received before a restart is handled now",
                    "{count} events received before a restart are handled now",
                    len(pending),
                ).format(count=len(pending))
            )
        await self._catch_up()

    async def _catch_up(self) -> None:
        """Handle what `/events?since=` the cursor has that was not handled yet."""
        served = self.served
        cursor = self.state.cursor(served.agent_id) if served is not None else None
        if cursor is None:
            return
        caught = 0
        since: str | None = cursor
        try:
            while True:
                events = await self.api.events(since)
                for event in events:
                    if isinstance(event.get("id"), str):
                        caught += 0 if self.state.is_handled(event["id"]) else 1
                        self._on_event(event, pushed=False)
                if len(events) < 100:
                    break
                since = str(events[-1]["id"])
        except TalkieError as error:
            self.warn(_("hub: could not catch up on missed events: {words}").format(words=error))
            return
        if caught:
            self.say(
                ngettext(
                    "caught up on {count} event from the hub",
                    "caught up on {count} events from the hub",
                    caught,
                ).format(count=caught)
            )

    async def _greet(self, conversation_id: str, event_id: str) -> None:
        """Greet the people of a new conversation (a failure is told, and the join goes on)."""
        assert self.greeting is not None
        try:
            await self.ops.send(conversation_id, self.greeting.message(event_id))
        except TalkieError as error:
            self.warn(
                _("could not greet {conversation}: {words}").format(
                    conversation=conversation_id, words=error
                )
            )

    def _delta_failed(self, message_id: str, code: str) -> None:
        self.answers.delta_failed(message_id, code)

    # --- the work -----------------------------------------------------------------------

    async def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        data = event["data"]
        conversation_id = str(data["conversation"]["id"])
        if kind == "conversation.joined":
            joined = self.state.mark_joined(conversation_id, event.get("created_at"))
            if joined and self.greeting is not None:
                await self._greet(conversation_id, str(event["id"]))
            names = ", ".join(
                f"{clean_text(str(p.get('display_name') or ''))} ({clean_text(str(p.get('id')))})"
                for p in data.get("participants") or []
                if isinstance(p, dict) and p.get("kind") == "user"
            )
            self.say(
                _("joined {conversation}: {people}").format(
                    conversation=conversation_id, people=names or "—"
                )
            )
        elif kind == "conversation.left":
            self.say(
                _("left {conversation} ({reason}): no more replies there").format(
                    conversation=conversation_id, reason=clean_text(str(data.get("reason") or ""))
                )
            )
        elif kind == "message.created":
            await self.answers.message(str(event["id"]), conversation_id, data.get("message") or {})
        elif kind in SCHEDULE_EVENTS:
            await self.schedules.event(event)
