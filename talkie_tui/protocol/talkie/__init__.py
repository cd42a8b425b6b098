"""talkie/1 on the wire: discovery, the error envelope, events, models and the HTTP client."""
