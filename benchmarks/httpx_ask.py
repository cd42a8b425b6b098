"""`talkie ask` in twenty lines of httpx + httpx-sse, the yardstick of benchmarks/startup.py.

The same requests (the manifest, then the run) and the same text on stdout.
Usage: python benchmarks/httpx_ask.py URL TOKEN MESSAGE
"""

import json
import sys
import uuid

import httpx
from httpx_sse import connect_sse

url, token, message = sys.argv[1:4]
with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
    manifest = http.get(f"{url}/.well-known/talkie.json").json()
    body = {
        "threadId": f"t_{uuid.uuid4().hex}",
        "runId": f"r_{uuid.uuid4().hex}",
        "messages": [{"id": f"m_{uuid.uuid4().hex}", "role": "user", "content": message}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    with connect_sse(http, "POST", url + manifest["endpoints"]["run"], json=body) as events:
        for sse in events.iter_sse():
            event = json.loads(sse.data)
            if event["type"] == "TEXT_MESSAGE_CONTENT":
                print(event["delta"], end="", flush=True)
print()
