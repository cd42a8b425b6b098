"""The sweeper: the retention window (paging stops there, `trimmed`), media budgets, unsent
uploads, all with short timings."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from tests.devserver.cuckoo.wire import dev, error_of, make_agent, person_send

# Each waits for the sweeper with short timings: end to end, about a second each.
pytestmark = pytest.mark.slow


def test_messages_leave_with_the_window(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(retention_seconds=0.6, sweep_interval=0.05)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        old = agent.send(http, text="old").json()["message"]
        time.sleep(0.7)
        new = agent.send(http, text="new").json()["message"]
        path = f"{url}/v1/client/conversations/{agent.conversation_id}/messages"
        page = http.get(path, headers=dev(agent.owner), params={"limit": 1}).json()
        assert [m["id"] for m in page["messages"]] == [new["id"]]
        assert page["next_before"] is None and page["trimmed"] is True
        history = agent.get(http, f"/conversations/{agent.conversation_id}/messages").json()
        assert [m["id"] for m in history["messages"]] == [new["id"]]
        assert history["next_before"] is None
        assert old["id"] not in str(history)
        storage = http.get(f"{url}/v1/client/me/storage", headers=dev(agent.owner)).json()
        assert storage["messages"]["kept_since"] > old["created_at"]


def test_media_over_budget_goes_oldest_first(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(person_media_budget=2500, sweep_interval=0.05)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        ids = []
        for n in range(3):
            media = http.post(
                f"{url}/v1/client/media",
                headers=dev(agent.owner),
                content=bytes([65 + n]) * 1000,
                params={"name": f"{n}.txt"},
            ).json()["media"]
            sent = person_send(
                http,
                url,
                agent.owner,
                agent.conversation_id,
                text=f"file {n}",
                attachments=[media["id"]],
            )
            assert sent.status_code == 201
            ids.append(media["id"])
        time.sleep(0.3)
        gone = http.get(f"{url}/v1/client/media/{ids[0]}", headers=dev(agent.owner))
        assert gone.status_code == 404 and error_of(gone)["code"] == "media_not_found"
        assert (
            http.get(f"{url}/v1/client/media/{ids[2]}", headers=dev(agent.owner)).status_code == 200
        )
        storage = http.get(f"{url}/v1/client/me/storage", headers=dev(agent.owner)).json()
        assert storage["media"] == {"used_bytes": 2000, "budget_bytes": 2500}
        page = http.get(
            f"{url}/v1/client/conversations/{agent.conversation_id}/messages",
            headers=dev(agent.owner),
        ).json()
        assert [m["body"]["text"] for m in page["messages"]] == ["file 2", "file 1", "file 0"]


def test_an_unsent_upload_is_swept(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(unsent_upload_seconds=0.3, sweep_interval=0.05)
    with httpx.Client() as http:
        agent = make_agent(http, url)
        media = http.post(f"{url}/v1/agent/media", headers=agent.headers, content=b"draft").json()[
            "media"
        ]
        time.sleep(0.6)
        assert (
            http.get(f"{url}/v1/agent/media/{media['id']}", headers=agent.headers).status_code
            == 404
        )
        late = agent.send(http, text="here", attachments=[media["id"]])
        assert error_of(late)["code"] == "unknown_attachment"
