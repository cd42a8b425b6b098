"""talkie/1 on the wire: discovery, errors, events and the HTTP client. No UI, no storage."""
