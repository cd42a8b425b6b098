"""Status (§4) with real usage counters, and the sample files."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.helpers import AUTH, TEST_TOKEN, ask, assert_error


def test_status_shape(http: httpx.Client, fast_url: str) -> None:
    status = http.get(f"{fast_url}/api/talkie/status", headers=AUTH).json()
    assert set(status["user"]) == {"id", "name", "email"}
    assert status["chat"] is True and status["voice"] is False
    tokens, runs = status["usage"]
    assert tokens["label"] == "Tokens today" and tokens["unit"] == "tokens"
    assert tokens["limit"] == 400000
    assert runs["label"] == "Runs today" and runs["unit"] == "runs"
    assert runs["limit"] > 0


def test_usage_grows_with_runs(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)

    def usage() -> tuple[int, int]:
        tokens, runs = http.get(f"{url}/api/talkie/status", headers=AUTH).json()["usage"]
        return tokens["used"], runs["used"]

    assert usage() == (0, 0)
    ask(http, url, "talkie-test:echo " + "word " * 40)
    tokens_after_one, runs_after_one = usage()
    assert runs_after_one == 1 and tokens_after_one > 40
    ask(http, url, "talkie-test:echo more")
    tokens_after_two, runs_after_two = usage()
    assert runs_after_two == 2 and tokens_after_two > tokens_after_one


def test_offer_pdf_download(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/api/files/Nabidka-N-2026-014.pdf", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert int(response.headers["content-length"]) == len(response.content) > 300
    assert response.content.startswith(b"%PDF-1.4")
    assert response.content.rstrip().endswith(b"%%EOF")
    assert b"N-2026-014" in response.content


def test_csv_download(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/api/files/Cenik-2026.csv", headers=AUTH)
    assert response.headers["content-type"].startswith("text/csv")
    assert response.text.startswith("item,price_czk")


def test_unknown_file_is_404(http: httpx.Client, fast_url: str) -> None:
    assert_error(http.get(f"{fast_url}/api/files/nope.pdf", headers=AUTH), 404, "not_found")


def test_pdf_is_well_formed() -> None:
    from talkie_tui.devserver.talkie.assets import pdf_document

    data = pdf_document("Nabídka (test)", ["řádek \\ 1", "line 2"])
    xref_at = int(data.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    assert data[xref_at:].startswith(b"xref\n0 6\n")
    offsets = [int(line[:10]) for line in data[xref_at:].split(b"\n")[3:8]]
    for number, offset in enumerate(offsets, start=1):
        assert data[offset:].startswith(f"{number} 0 obj".encode())
    assert b"(Nabidka \\(test\\)) Tj" in data
