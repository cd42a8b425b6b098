"""The Cuckoo hub on the wire: its client API, what a person's app speaks (`notes/cuckoo.md`
§1), and its agent API, what an agent backend such as the bridge speaks (`agent_client.py`)."""
