"""The reference Minara gateway (`minara-chat.md`, `minara-stream.md`, and this project's contract).

Sessions and their rows in SQLite with full-text search (`storage`), per-session event buffers
with sequence numbers (`channels`), the multiplexed `/v1/stream` socket (`socket`), turns run in
the background (`turns`, `turn_context`, with the rows folded from the events by `record`), the
agent's questions (`questions`), files and transcription (`files`, `voice`), memory-only
credentials, the test-mode scripts (`testmode`) and a scripted crypto-portfolio demo agent
(`demo_agent`, `demo_data`). `runner.serve_in_thread(config)` starts it.
"""
