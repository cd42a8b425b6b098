"""The reference Cuckoo hub: people's apps (the client API), agent backends (the agent API,
its socket and webhooks) and owners (the management API) meet in conversations stored in SQLite.

Any Cuckoo agent backend connects to it unchanged: the rules are `spec/cuckoo-agent.md` and the
client and management routes those of `notes/cuckoo.md`.
"""
