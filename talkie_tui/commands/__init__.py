"""The bodies of the `talkie` subcommands that run without the TUI."""
