"""Signing in from the TUI: the screens behind a protocol's `Prompts`, and what they share."""
