"""Each protocol on the wire (talkie/, minara/, cuckoo/) and the network code they share (net/).

No UI, no storage, no sign-in: a wire client takes a token source and speaks its protocol.
"""
