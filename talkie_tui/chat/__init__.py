"""Conversation state without UI: events and thread history folded into turns."""
