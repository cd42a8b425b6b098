"""Interop: our client decodes and reduces a stream we did not write (pydantic-ai's AG-UI adapter).

The producer is pydantic-ai's `AGUIAdapter` with its TestModel / FunctionModel (no LLM), served
as the `run` endpoint of a minimal talkie/1 server on 127.0.0.1. Each agent has its own
manifest (`/manifests/<agent>.json`) whose `run` endpoint is that agent's route.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.backends.talkie.session import TalkieSession
from talkie_tui.chat.turns import NoticePart, TextPart, ToolPart, Turn
from talkie_tui.protocol.talkie.client import TalkieClient
from tests.stub_server import StubServer

text_agent = Agent(TestModel(custom_output_text="Hello from TestModel"))
tool_agent = Agent(TestModel(call_tools=["get_weather"], custom_output_text="It is sunny"))


@tool_agent.tool_plain
def get_weather(city: str) -> str:
    """A backend tool the TestModel calls."""
    return f"sunny in {city}"


async def _hostile_deltas(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    # Markup, unicode and a control sequence, as a model might produce them.
    for delta in ["Příliš ", "**žluťoučký** ", "[b]kůň[/b]", "\x1b[2J", " úpěl."]:
        yield delta


AGENTS: dict[str, Agent[None, str]] = {
    "text": text_agent,
    "tool": tool_agent,
    "hostile": Agent(FunctionModel(stream_function=_hostile_deltas)),
    # Without a stream function, FunctionModel fails after the run started: a real RUN_ERROR.
    "failing": Agent(FunctionModel(function=lambda messages, info: None)),  # type: ignore[arg-type, return-value]
}


async def _run(request: Request) -> Response:
    agent = AGENTS[request.path_params["agent"]]
    return await AGUIAdapter.dispatch_request(request, agent=agent)


async def _manifest(request: Request) -> Response:
    origin = f"http://{request.headers['host']}"
    name = request.path_params["agent"]
    return JSONResponse(
        {
            "spec": "talkie/1",
            "issuer": origin,
            "serverId": f"pydantic-ai-{name}",
            "name": "pydantic-ai AG-UI adapter",
            "auth": {"token": {}},
            "endpoints": {"run": f"/agents/{name}"},
        }
    )


@pytest.fixture(scope="module")
def producer() -> Iterator[StubServer]:
    """The pydantic-ai agents behind AG-UI routes on 127.0.0.1."""
    from starlette.applications import Starlette

    app = Starlette(
        routes=[
            Route("/agents/{agent}", _run, methods=["POST"]),
            Route("/manifests/{agent}.json", _manifest),
        ]
    )
    server = StubServer(app).start()
    yield server
    server.stop()


async def _answer(producer: StubServer, agent: str) -> Turn:
    """Send one message to `agent` and return the assistant turn our reducer built."""
    client = await TalkieClient.connect(producer.url(f"/manifests/{agent}.json"))
    async with client:
        session = TalkieSession(client)
        async for _ in session.send(session.prepare("What is the weather in Brno?")):
            pass
    turns = session.conversation.turns
    assert [turn.role for turn in turns] == ["user", "assistant"]
    return turns[1]


async def test_text_stream_is_decoded_and_reduced(producer: StubServer) -> None:
    answer = await _answer(producer, "text")
    assert answer.state == "done"
    assert answer.text == "Hello from TestModel"
    assert all(isinstance(part, TextPart) and part.done for part in answer.parts)


async def test_tool_call_stream_hides_empty_message_and_shows_tool(producer: StubServer) -> None:
    answer = await _answer(producer, "tool")
    assert answer.state == "done"
    kinds = [type(part) for part in answer.parts]
    # pydantic-ai sends an empty START/END before the tool call: it must not show up.
    assert kinds == [ToolPart, TextPart]
    tool = answer.parts[0]
    assert isinstance(tool, ToolPart)
    assert (tool.name, tool.state) == ("get_weather", "ok")
    assert answer.text == "It is sunny"


async def test_producer_text_is_cleaned_but_markup_kept(producer: StubServer) -> None:
    answer = await _answer(producer, "hostile")
    assert answer.text == "Příliš **žluťoučký** [b]kůň[/b] úpěl."
    assert "\x1b" not in answer.text


async def test_run_error_from_producer_is_shown(producer: StubServer) -> None:
    answer = await _answer(producer, "failing")
    assert answer.state == "error"
    notice = answer.parts[-1]
    assert isinstance(notice, NoticePart)
    assert "stream_function" in notice.text
