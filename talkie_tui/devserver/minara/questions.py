"""Questions the agent asks back: open ones by id, their answers validated, their outcome told.

A question closes once: answered (`POST /v1/interactions/:id/answer`), timed out, or cancelled
with its turn. Each close emits `pending_question_resolved` into the session's stream, so every
subscriber sees it whoever answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from talkie_tui.devserver.minara.credentials import Credentials, name_of
from talkie_tui.devserver.minara.errors import ApiError, invalid_request

KINDS = ("select", "confirm", "input", "secret")
SECRET_LABELS = ("provided", "declined")
MAX_FREE_TEXT = 4000

Emit = Callable[[str, dict[str, Any]], None]


@dataclass
class Answer:
    """The answer to one question of an interaction."""

    labels: list[str] = field(default_factory=list)
    free_text: str | None = None

    @property
    def text(self) -> str:
        """The answer in words: the labels joined, or the typed text."""
        return self.free_text if self.free_text is not None else ", ".join(self.labels)


@dataclass
class PendingQuestion:
    """An open interaction: its payload (as sent in `pending_question_added`) and its waiter."""

    session_id: str
    payload: dict[str, Any]
    emit: Emit
    future: asyncio.Future[list[Answer] | None]

    @property
    def id(self) -> str:
        """The interaction id."""
        return str(self.payload["id"])

    @property
    def kind(self) -> str:
        """select, confirm, input or secret."""
        return str(self.payload["kind"])


class QuestionBoard:
    """The open questions of every session."""

    def __init__(self, credentials: Credentials) -> None:
        self._credentials = credentials
        self._open: dict[str, PendingQuestion] = {}

    def open(self, session_id: str, payload: dict[str, Any], emit: Emit) -> PendingQuestion:
        """Register a question (its `pending_question_added` is the caller's to emit)."""
        future: asyncio.Future[list[Answer] | None] = asyncio.get_running_loop().create_future()
        pending = PendingQuestion(session_id, payload, emit, future)
        self._open[pending.id] = pending
        return pending

    def pending_for(self, session_id: str) -> list[dict[str, Any]]:
        """The payloads of a session's open questions, oldest first."""
        return [item.payload for item in self._open.values() if item.session_id == session_id]

    def answer(self, question_id: str, body: Any) -> None:
        """Validate and apply an answer; 404 `not_pending` when nothing waits for it."""
        pending = self._open.get(question_id)
        if pending is None:
            raise ApiError(
                404,
                "not_pending",
                f"Question {question_id} is not pending (answered elsewhere, expired or unknown).",
            )
        answers = self._validate(pending, body)
        self._close(pending, "answered", answers)

    def close(self, question_id: str, outcome: str) -> None:
        """Close a question without an answer (`timeout`, `cancelled`); no-op when closed."""
        pending = self._open.get(question_id)
        if pending is not None:
            self._close(pending, outcome, None)

    def _close(self, pending: PendingQuestion, outcome: str, answers: list[Answer] | None) -> None:
        del self._open[pending.id]
        pending.emit("pending_question_resolved", {"id": pending.id, "outcome": outcome})
        if not pending.future.done():
            pending.future.set_result(answers)

    def _validate(self, pending: PendingQuestion, body: Any) -> list[Answer]:
        questions: list[dict[str, Any]] = pending.payload["questions"]
        if not isinstance(body, dict) or not isinstance(body.get("answers"), list):
            raise invalid_request("The body needs `answers`: a list of one answer per question.")
        answers: dict[int, Answer] = {}
        for item in body["answers"]:
            index = item.get("questionIndex") if isinstance(item, dict) else None
            if not isinstance(index, int) or isinstance(index, bool):
                raise invalid_request("Every answer needs an integer `questionIndex`.")
            if not 0 <= index < len(questions):
                raise invalid_request(
                    f"questionIndex {index} is out of range (0..{len(questions) - 1})."
                )
            if index in answers:
                raise invalid_request(f"Question {index} is answered twice.")
            answers[index] = self._one_answer(pending, questions[index], index, item)
        missing = [index for index in range(len(questions)) if index not in answers]
        if missing:
            raise invalid_request(f"Question {missing[0]} has no answer.")
        return [answers[index] for index in range(len(questions))]

    def _one_answer(
        self, pending: PendingQuestion, question: dict[str, Any], index: int, item: dict[str, Any]
    ) -> Answer:
        labels, free_text = item.get("selected_labels"), item.get("free_text")
        if pending.kind == "input":
            if not isinstance(free_text, str) or not free_text.strip():
                raise invalid_request(f"Question {index} asks for `free_text`.")
            if len(free_text) > MAX_FREE_TEXT:
                raise invalid_request(f"The answer is over {MAX_FREE_TEXT} characters.")
            return Answer(free_text=free_text)
        is_labels = isinstance(labels, list) and all(isinstance(x, str) for x in labels)
        if not is_labels or not labels:
            raise invalid_request(f"Question {index} asks for `selected_labels` (a list).")
        if pending.kind == "secret":
            allowed = list(SECRET_LABELS)
        else:
            allowed = [str(option["label"]) for option in question.get("options", [])]
        unknown = [label for label in labels if label not in allowed]
        if unknown:
            raise invalid_request(
                f"{unknown[0]!r} is not an option of question {index} (options: "
                + ", ".join(allowed)
                + ")."
            )
        if len(labels) > 1 and not question.get("multi", False):
            raise invalid_request(f"Question {index} takes one label.")
        if len(set(labels)) != len(labels):
            raise invalid_request(f"Question {index}: a label is selected twice.")
        if pending.kind == "secret" and labels == ["provided"]:
            self._check_secret_written(pending)
        return Answer(labels=list(labels))

    def _check_secret_written(self, pending: PendingQuestion) -> None:
        name = name_of(str(pending.payload.get("writeEndpoint", "")))
        if name is not None and not self._credentials.has(name):
            raise ApiError(
                400,
                "invalid_request",
                f"Write the secret to {pending.payload['writeEndpoint']} before answering "
                "`provided`.",
            )
