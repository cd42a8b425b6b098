"""The Minara gateway backend (`minara-chat.md`, `minara-stream.md`); only its reducer so far."""
