"""Sign-in: OAuth 2.1 + PKCE, the loopback receiver and where tokens are kept."""
