"""The Textual TUI: screens and widgets render chat/ and protocol/ objects and post messages."""
