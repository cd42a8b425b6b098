"""An independent Cuckoo agent backend and person, written from the public protocol text only.

Nothing here imports talkie: the peer speaks to the hub over HTTP and WebSocket like any backend
somebody else wrote, so a test that passes here checks the hub against the text, not against its
own counterpart.
"""
