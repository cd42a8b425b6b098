"""The TUI's infrastructure: palette, painting, crashes, links, notifications, Markdown."""
