"""Signing in from the TUI: the screens that ask the person."""
