"""Tests of the reference servers: one folder per server, and the layout of their shared parts."""
