"""The network code every protocol shares: HTTP clients, proxies, trust, SSE framing, failures."""
