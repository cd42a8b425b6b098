"""A fake realtime speech provider on 127.0.0.1 that speaks `openai-realtime/1` over WebRTC.

Import `provider` only when fake voice is on: it pulls in aiortc, PyAV and numpy.
"""
