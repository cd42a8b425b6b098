"""The Textual TUI: screens and widgets render the conversation (chat/) and the backends' model
objects, and post messages; the chat screen's controllers do the work through a Backend."""
