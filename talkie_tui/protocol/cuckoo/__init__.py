"""The Cuckoo hub's client API on the wire: what a person's app speaks (`notes/cuckoo.md` §1)."""
