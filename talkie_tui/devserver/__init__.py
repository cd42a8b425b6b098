"""The reference servers, one package per protocol, and the pieces they share.

- `talkie/`: the talkie/1 server (manifest, runs, cards, actions, voice with a fake realtime
  provider, test mode, the demo CRM agent, dev-token and OAuth introspection sign-in);
- `common/`: what does not depend on any protocol (SQLite connection, SSE framing, ids, clock,
  HTTP helpers, the uvicorn runner). It imports no server package.

A Minara gateway (`minara/`) and a Cuckoo hub (`cuckoo/`) are to sit beside `talkie/`.
"""
