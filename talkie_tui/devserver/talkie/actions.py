"""§8 actions: proposals, the decision state machine, expiry and the undo window."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ag_ui.core import CustomEvent

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.ids import new_id
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.errors import ApiError, not_found
from talkie_tui.devserver.talkie.storage import Storage

logger = logging.getLogger(__name__)

Risk = Literal["low", "medium", "high"]
Decision = Literal["confirm", "cancel"]


@dataclass(frozen=True)
class ActionResult:
    """What a confirmed action produced: its result card (`fallbackText` says it in one line)."""

    card: cards.Card


@dataclass(frozen=True)
class ActionKind:
    """An operation the agent may propose; `execute` runs only after a human confirmed it."""

    name: str
    risk: Risk
    execute: Callable[[dict[str, Any], bool], ActionResult]
    # Outbound operations (e-mail, SMS) wait `undo_seconds` in status `running` before they happen.
    outbound: bool = False


def params_hash(params: Mapping[str, Any]) -> str:
    """`sha256:<hex>` of the canonical JSON of the parameters."""
    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def confirm_policy(risk: Risk, voice_keyword: str | None) -> dict[str, Any]:
    """The `confirm` UI policy: high risk needs a button press, others may be confirmed by voice."""
    if risk == "high":
        return {"methods": ["button"]}
    policy: dict[str, Any] = {"methods": ["button", "voice"]}
    if voice_keyword:
        policy["voice"] = {"keyword": voice_keyword}
    return policy


def card_event(card: cards.Card) -> dict[str, Any]:
    """A `CUSTOM talkie.card` event as a JSON object."""
    return CustomEvent(name="talkie.card", value=card).model_dump(by_alias=True, mode="json")


class ActionService:
    """Creates actions for the agent and applies human decisions from the HTTP endpoint."""

    def __init__(
        self, storage: Storage, config: ServerConfig, kinds: Mapping[str, ActionKind]
    ) -> None:
        self._storage = storage
        self._config = config
        self._kinds = dict(kinds)

    def propose(
        self,
        *,
        user_id: str,
        thread_id: str,
        tool_call_id: str,
        kind: str,
        summary: str,
        params: dict[str, Any],
        locale: str,
        voice_keyword: str | None = None,
    ) -> dict[str, Any]:
        """Store a new pending action and return its wire record."""
        action_kind = self._kinds[kind]
        created = clock.now()
        record = {
            "id": new_id("a"),
            "version": 1,
            "threadId": thread_id,
            "toolCallId": tool_call_id,
            "summary": summary,
            "riskLevel": action_kind.risk,
            "status": "pending",
            "paramsHash": params_hash(params),
            "createdAt": clock.iso(created),
            "expiresAt": clock.iso(clock.later(self._config.action_ttl_seconds, created)),
            "confirm": confirm_policy(action_kind.risk, voice_keyword),
        }
        self._storage.insert_action(record, user_id, kind, params, locale)
        return record

    def current(self, user_id: str, action_id: str) -> dict[str, Any]:
        """The authoritative state of an action (404 when unknown)."""
        return self._refresh(self._load(user_id, action_id))

    def thread_actions(self, thread_id: str) -> list[dict[str, Any]]:
        """The actions of a thread with their current status."""
        return [self._refresh(row) for row in self._storage.thread_actions(thread_id)]

    def cancel_pending(self, thread_id: str) -> None:
        """Cancel every action of the thread still waiting for a decision."""
        for row in self._storage.thread_actions(thread_id):
            record = self._refresh(row)
            if record["status"] == "pending":
                record["status"] = "cancelled"
                self._storage.update_action(row["id"], record, "cancel")

    def decide(
        self, user_id: str, action_id: str, decision: Decision, given_hash: str, method: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Apply a human decision; returns the action and the events it produced."""
        row = self._load(user_id, action_id)
        record = self._refresh(row)
        if record["status"] == "expired":
            raise ApiError(410, "expired", f"This action expired at {record['expiresAt']}.")
        if given_hash != record["paramsHash"]:
            raise ApiError(
                409,
                "stale",
                "The action's parameters changed since it was shown; reload it and decide again.",
            )
        previous = row["decision"]
        if previous == decision:
            return record, []
        if previous is not None:
            if decision == "cancel" and self._in_undo_window(record):
                return self._undo(row, record, method), []
            raise ApiError(
                409,
                "conflict",
                f"This action was already decided ({previous}); it is now {record['status']}.",
            )
        logger.info("action %s: %s by %s", action_id, decision, method)
        self._note_decision(row, decision, method)
        if decision == "cancel":
            record["status"] = "cancelled"
            self._storage.update_action(action_id, record, "cancel")
            return record, []
        return self._confirm(row, record)

    def _note_decision(self, row: Row, decision: str, method: str) -> None:
        """Append the decision and how it was made to the audit log (§8: `method` is for audit)."""
        at = clock.iso(clock.now())
        self._storage.add_decision(row["id"], row["user_id"], decision, method, at)

    def _load(self, user_id: str, action_id: str) -> Row:
        row = self._storage.get_action(user_id, action_id)
        if row is None:
            raise not_found(f"Action {action_id}")
        return row

    def _confirm(self, row: Row, record: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        kind = self._kinds[row["kind"]]
        if kind.outbound:
            record["status"] = "running"
            record["undoUntil"] = clock.iso(clock.later(self._config.undo_seconds))
            self._storage.update_action(row["id"], record, "confirm")
            return record, [card_event(self._scheduled_card(row, record))]
        result = self._execute(row, record)
        self._storage.update_action(row["id"], record, "confirm")
        return record, [card_event(result.card)] if result else []

    def _undo(self, row: Row, record: dict[str, Any], method: str) -> dict[str, Any]:
        logger.info("action %s: undone by %s", row["id"], method)
        self._note_decision(row, "cancel", method)
        record["status"] = "cancelled"
        record.pop("undoUntil", None)
        self._storage.update_action(row["id"], record, "cancel")
        return record

    def _in_undo_window(self, record: dict[str, Any]) -> bool:
        return record["status"] == "running" and "undoUntil" in record

    def _refresh(self, row: Row) -> dict[str, Any]:
        """Apply the transitions that happen by themselves: expiry, end of an undo window."""
        record: dict[str, Any] = row["record"]
        moment = clock.now()
        if record["status"] == "pending" and moment >= clock.parse_iso(record["expiresAt"]):
            record["status"] = "expired"
            self._storage.update_action(row["id"], record, row["decision"])
        elif self._in_undo_window(record) and moment >= clock.parse_iso(record["undoUntil"]):
            self._execute(row, record, at=record["undoUntil"])
            self._storage.update_action(row["id"], record, row["decision"])
        return record

    def _execute(
        self, row: Row, record: dict[str, Any], *, at: str | None = None
    ) -> ActionResult | None:
        """Run the confirmed operation, set done/failed and post the result into the thread."""
        czech = row["locale"] == "cs"
        try:
            result = self._kinds[row["kind"]].execute(row["params"], czech)
        except Exception:
            logger.exception("action %s failed", row["id"])
            record["status"] = "failed"
            record.pop("undoUntil", None)
            return None
        record["status"] = "done"
        record.pop("undoUntil", None)
        # The thread keeps what the decision showed: the card alone. A line of text beside it
        # would say the card's contents a second time when the thread is loaded again.
        self._storage.add_message(
            row["thread_id"],
            new_id("m"),
            "assistant",
            "",
            at or clock.iso(clock.now()),
            cards=[result.card],
        )
        return result

    def _scheduled_card(self, row: Row, record: dict[str, Any]) -> cards.Card:
        """What was scheduled (the summary), when it goes out, and that it can still be
        cancelled: each said once (the action card beside it counts the time down)."""
        czech = row["locale"] == "cs"
        seconds = f"{self._config.undo_seconds:g}"
        if czech:
            title, badge = "Odeslání naplánováno", f"Odejde za {seconds} s"
            note, plain = "Do té doby ho ještě můžete **zrušit**.", "do té doby ho lze zrušit"
        else:
            title, badge = "Sending scheduled", f"Goes out in {seconds} s"
            note, plain = (
                "Until then you can still **cancel** it.",
                "until then it can be cancelled",
            )
        return cards.card(
            title,
            [cards.badge(badge, "warning"), cards.text(note)],
            f"{title}: {record['summary']}. {badge}, {plain}.",
            subtitle=record["summary"],
        )
