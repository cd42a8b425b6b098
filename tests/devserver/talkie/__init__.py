"""Tests of the talkie/1 reference server, over real HTTP on 127.0.0.1."""
