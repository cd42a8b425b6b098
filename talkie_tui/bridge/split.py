"""Where one message of a long reply ends and the next begins (`Splitter`, `find_cut`).

The hub keeps at most 8000 characters of a streamed message, so a longer reply is sent as
several messages; a person's client joins nothing: it renders each message on its own, so each
must read well, and be valid Markdown, by itself. The rule, for each message:

1. Until the message holds `SOFT_CHARS` characters, it takes all the text.
2. Past that, it ends at the first paragraph break: right after a blank line (only spaces or
   tabs) that is not inside a fenced code block. Any further blank lines begin the next one.
3. If no paragraph break comes before the message would hold `MESSAGE_CHARS`, it ends after
   the last line break past `SOFT_CHARS` that fits; failing that, after the last space or tab
   past it; only as a last resort at the limit itself (not between "\\r" and "\\n", nor just
   before a combining mark or around a zero-width joiner).
4. A message that ends inside a fenced code block gets a line closing the fence, and the next
   begins with the fence's opening line (info string and all), so that both show code. These
   two lines are the only text the bridge adds: without them, the messages' texts joined are
   the reply's text exactly.

Fences are followed over the whole reply, line by line, as CommonMark has them at the top level:
a line of at least three backticks or tildes indented by at most three spaces opens one (a
backtick fence's info string has no backtick), and a line of the same character, at least as
long, with nothing but spaces or tabs after it, closes it. A line indented by four spaces or
more (an indented code block) is never a fence. Not followed: fences inside block quotes
("> ```") and fences of list items indented by four or more; a blank line in one of those may
end a message.

Text that the next message may still take is held back: past `SOFT_CHARS` a message streams up
to its last line break that fits (before the first, up to its last space), so nothing it was
given has to be taken back; a paragraph's line streams word by word.

The cut depends on the text alone, never on how it arrived in deltas or when: a replayed run
(the same text, perhaps in other deltas) makes the same messages, as the idempotency keys of
`reply.Reply` need.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "MESSAGE_CHARS",
    "SOFT_CHARS",
    "Chunk",
    "Cut",
    "Fence",
    "Splitter",
    "fence_at",
    "find_cut",
    "split_text",
]

MESSAGE_CHARS = 7800
"""The most characters the bridge puts in one message, the fence lines it adds included. The
hub clamps a streamed message at 8000 and marks it truncated; the 200 to spare leave room for
the fence a message carried on after the hub finished one early opens again
(`reply.Reply._carry_on`)."""

SOFT_CHARS = 6000
"""Past this many characters a message ends at the next paragraph break (see the module
docstring). The 1800 characters between it and `MESSAGE_CHARS` are several paragraphs of a
chat answer (the benchmark answer's run 100 to 600 characters), so a paragraph break is all but
sure to come before the limit, and a long answer still goes in few messages, each at least
three quarters of what the hub allows. A lower figure would mean more, shorter messages; a
higher one, more messages cut at a line break inside a list, a table or a code block. It is
also where holding back begins: text past it may move to the next message, so it streams a word
or a line at a time rather than a token at a time."""

REOPEN_CHARS = 100
"""An opening fence line longer than this is opened again without its info string."""

_OPENER = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_JOINERS = {"\u200d"}  # zero-width joiner: an emoji sequence goes on after it


@dataclass(frozen=True, slots=True)
class Fence:
    """An open fenced code block: its fence (a run of backticks or tildes) and the line that
    opened it, line ending included."""

    run: str
    line: str

    @property
    def newline(self) -> str:
        return "\r\n" if self.line.endswith("\r\n") else "\n"

    @property
    def reopen(self) -> str:
        """The line that opens the block again at the start of the next message."""
        if len(self.line) <= REOPEN_CHARS:
            return self.line
        indent = self.line[: len(self.line) - len(self.line.lstrip(" "))]
        return indent + self.run + self.newline

    def close(self, *, at_line_start: bool) -> str:
        """What closes the block at the end of a message that ends inside it."""
        return ("" if at_line_start else self.newline) + self.run


def _after(fence: Fence | None, line: str) -> Fence | None:
    """The fence open after `line` (given without its "\\n") when `fence` was open before."""
    body = line.removesuffix("\r")
    if fence is None:
        opened = _OPENER.fullmatch(body)
        if opened is None:
            return None
        run, info = opened.group(2), opened.group(3)
        if run[0] == "`" and "`" in info:
            return None  # inline code, not a fence
        return Fence(run, line + "\n")
    closed = _CLOSER.fullmatch(body)
    run = closed.group(1) if closed is not None else ""
    if run[:1] == fence.run[0] and len(run) >= len(fence.run):
        return None
    return fence


def _blank(line: str) -> bool:
    return not line.strip(" \t\r")


def fence_at(text: str, fence: Fence | None = None) -> Fence | None:
    """The fence open after the complete lines of `text` (`fence` open at its start)."""
    start = 0
    while (end := text.find("\n", start)) != -1:
        fence = _after(fence, text[start:end])
        start = end + 1
    return fence


def _closing(fence: Fence | None, *, at_line_start: bool) -> int:
    return 0 if fence is None else len(fence.close(at_line_start=at_line_start))


def _unsplittable(text: str, at: int) -> bool:
    """Whether a cut at `at` would split a CRLF, a base from its combining mark, or a
    zero-width-joined sequence."""
    if at <= 0 or at >= len(text):
        return False
    before, after = text[at - 1], text[at]
    if before == "\r" and after == "\n":
        return True
    if before in _JOINERS or after in _JOINERS:
        return True
    return unicodedata.category(after) in ("Mn", "Mc", "Me") or 0x1F3FB <= ord(after) <= 0x1F3FF


@dataclass(frozen=True, slots=True)
class Cut:
    """Where a message ends: `at` characters into its text (the reply's, without the fence
    line it may begin with), `fence` open there (closed at the message's end, opened again at
    the next one's start), and whether the next message begins at a line's start."""

    at: int
    fence: Fence | None = None
    line_start: bool = True


class _Part:
    """One message's share of the reply's text, read as it grows."""

    def __init__(self, fence: Fence | None, *, soft: int, limit: int, mid_line: bool) -> None:
        self.opened = fence
        self.prefix = fence.reopen if fence is not None else ""
        self.room = max(1, limit - len(self.prefix))  # the text's characters that fit
        self.soft = min(max(0, soft - len(self.prefix)), self.room)
        self.text = ""
        self.scanned = 0  # where the line not yet complete begins
        self.fence = fence  # open at `scanned`
        self.starts = [0]  # each line's start, and the fence open there
        self.fences: list[Fence | None] = [fence]
        self.mid_line = mid_line  # the first line began in the message before
        self.paragraph: int | None = None
        self.line_cut: Cut | None = None  # the last line break past `soft` that fits

    def add(self, text: str) -> None:
        self.text += text
        while self.paragraph is None and self.scanned <= self.room:
            end = self.text.find("\n", self.scanned)
            if end == -1:
                return
            line = self.text[self.scanned : end]
            before = self.fence
            if self.mid_line:  # the rest of a line: neither a fence nor blank
                self.mid_line = False
                after, blank = before, False
            else:
                after = _after(before, line)
                blank = before is None and _blank(line)
            at = end + 1
            self.fence, self.scanned = after, at
            self.starts.append(at)
            self.fences.append(after)
            if at < self.soft:
                continue
            if blank and at <= self.room:
                self.paragraph = at
                return
            if at + _closing(after, at_line_start=True) <= self.room:
                self.line_cut = Cut(at, after, True)

    def _fence_of(self, at: int) -> Fence | None:
        """The fence open at the start of the line holding the character before `at`."""
        return self.fences[bisect.bisect_right(self.starts, max(0, at - 1)) - 1]

    def _space(self, end: int) -> Cut | None:
        """A cut after the last space or tab between `soft` and `end` that fits."""
        text = self.text
        found = max(text.rfind(" ", self.soft, end), text.rfind("\t", self.soft, end))
        while found >= self.soft:
            at = found + 1
            fence = self._fence_of(at)
            if at + _closing(fence, at_line_start=False) <= self.room:
                return Cut(at, fence, False)
            found = max(text.rfind(" ", self.soft, found), text.rfind("\t", self.soft, found))
        return None

    def _hard(self) -> Cut:
        at = self.room - _closing(self._fence_of(self.room), at_line_start=False)
        at = self.room - _closing(self._fence_of(at), at_line_start=False)
        while at > max(1, self.soft) and _unsplittable(self.text, at):
            at -= 1
        return Cut(max(1, at), self._fence_of(max(1, at)), False)

    def cut(self, *, final: bool) -> Cut | None:
        """Where the message ends: None while the text so far cannot tell."""
        if self.paragraph is not None:
            return Cut(self.paragraph)
        if len(self.text) <= self.room:
            return Cut(len(self.text), self.fence) if final else None
        return self.line_cut or self._space(self.room) or self._hard()

    def safe(self) -> int:
        """How much of the text is this message's whatever comes next."""
        if len(self.text) <= self.soft:
            return len(self.text)
        if self.line_cut is not None:
            return self.line_cut.at
        space = self._space(min(len(self.text), self.room))
        return space.at if space is not None else self.soft


def find_cut(
    text: str,
    *,
    fence: Fence | None = None,
    final: bool = False,
    soft: int = SOFT_CHARS,
    limit: int = MESSAGE_CHARS,
) -> Cut | None:
    """Where a message whose text (the reply's from where the message begins) is `text` ends,
    `fence` being open at its start (the message then begins with its opening line); None when
    more text must come to tell. `final`: no more text comes, so what fits is the message."""
    part = _Part(fence, soft=soft, limit=limit, mid_line=False)
    part.add(text)
    return part.cut(final=final)


@dataclass(frozen=True, slots=True)
class Chunk:
    """Text for the current message, and whether the message ends after it."""

    text: str
    ends: bool = False


class Splitter:
    """A reply's streamed text cut into messages (see the module docstring): `feed` each delta
    and `finish` at the text's end; both give the chunks to send, in order."""

    def __init__(self, *, soft: int = SOFT_CHARS, limit: int = MESSAGE_CHARS) -> None:
        self.soft = soft
        self.limit = limit
        self._part = self._new(None, mid_line=False)
        self._given = 0  # characters of the part's text given out
        self._begun = False  # the part's message has had text (its fence line first)

    def _new(self, fence: Fence | None, *, mid_line: bool) -> _Part:
        return _Part(fence, soft=self.soft, limit=self.limit, mid_line=mid_line)

    @property
    def pending(self) -> bool:
        """Whether the current message has text, sent or held back."""
        return bool(self._part.text)

    def feed(self, text: str) -> list[Chunk]:
        self._part.add(text)
        return self._take(final=False)

    def finish(self) -> list[Chunk]:
        """The rest, the last message ended; the next text begins a message outside any fence."""
        chunks = self._take(final=True)
        self._part = self._new(None, mid_line=False)
        self._given, self._begun = 0, False
        return chunks

    def _give(self, text: str) -> str:
        if text and not self._begun:
            self._begun = True
            return self._part.prefix + text
        return text

    def _take(self, *, final: bool) -> list[Chunk]:
        chunks: list[Chunk] = []
        while True:
            part = self._part
            cut = part.cut(final=final)
            if cut is None:
                safe = part.safe()
                if safe > self._given:
                    chunks.append(Chunk(self._give(part.text[self._given : safe])))
                    self._given = safe
                return chunks
            whole = final and cut.at == len(part.text)
            tail = self._give(part.text[self._given : cut.at])
            if cut.fence is not None and not whole:
                tail += cut.fence.close(at_line_start=cut.line_start)
            if self._begun or tail:
                chunks.append(Chunk(tail, ends=True))
            if whole:
                return chunks
            rest = part.text[cut.at :]
            self._part = self._new(cut.fence, mid_line=not cut.line_start)
            self._given, self._begun = 0, False
            self._part.add(rest)


def split_text(text: str, *, soft: int = SOFT_CHARS, limit: int = MESSAGE_CHARS) -> list[str]:
    """The messages `text` is sent as, whole (for tests and for reading the rule)."""
    splitter = Splitter(soft=soft, limit=limit)
    messages: list[str] = []
    current: list[str] = []
    for chunk in [*splitter.feed(text), *splitter.finish()]:
        current.append(chunk.text)
        if chunk.ends:
            messages.append("".join(current))
            current = []
    return messages
