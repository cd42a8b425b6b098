"""The Cuckoo backend: a person's app on a hub (the reducer of its messages so far)."""
