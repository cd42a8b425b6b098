"""`talkie conformance` for Cuckoo: the hub checks, and the agent mode that checks an agent."""
