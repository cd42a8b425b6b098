"""The network code every protocol shares: HTTP clients, proxies, trust, SSE framing, failures,
and the reconnecting WebSocket (`websocket.py`)."""
