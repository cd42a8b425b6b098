"""`talkie ask` in twenty lines of httpx + httpx-sse, the yardstick of benchmarks/startup.py.

The same requests (the manifest, then the run) and the same text on stdout.
Usage: python benchmarks/httpx_ask.py URL TOKEN MESSAGE
"""

import json
import sys

import httpx
from httpx_sse import connect_sse
from run_body import run_body

url, token, message = sys.argv[1:4]
with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
    manifest = http.get(f"{url}/.well-known/talkie.json").json()
    run = url + manifest["endpoints"]["run"]
    with connect_sse(http, "POST", run, json=run_body(message)) as events:
        for sse in events.iter_sse():
            event = json.loads(sse.data)
            if event["type"] == "TEXT_MESSAGE_CONTENT":
                print(event["delta"], end="", flush=True)
print()
