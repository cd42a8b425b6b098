"""Pieces every reference server can use, whatever protocol it speaks.

SQLite connection and transactions (`sqlite`), SSE framing and following a log of frames
(`sse`), server ids (`ids`), wire timestamps (`clock`), HTTP helpers: bearer header, pydantic
errors in words, a body validated into a model, a 500 instead of a bare crash (`http`), the
error every server raises (`errors`), running a Starlette app under uvicorn (`server`) with a
server's config (`runner`), the live runs or turns followers read and a stop ends
(`live_work`), and the seeded long Markdown answer the streaming benchmarks send
(`long_answer`). Nothing here imports a server package or AG-UI: each protocol's wire
format, error envelope and storage tables stay in its own package.
"""
