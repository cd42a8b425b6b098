"""`talkie conformance`: the checks of each protocol (talkie/1 §11, Minara gateways, Cuckoo
hubs) against any server, and of Cuckoo agent backends against a hub of talkie's own."""
