"""The Minara chat protocol on the wire (`minara-chat.md`, `minara-stream.md`): the socket's
frames, the REST client, the multiplexed stream, and the models of what the gateway answers.
No UI, no token store."""
