"""`talkie conformance` for Minara gateways: agent-independent checks of the chat protocol."""
