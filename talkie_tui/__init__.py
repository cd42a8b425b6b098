"""talkie: the terminal client for Talkie Protocol 1."""

__version__ = "0.1.0"
