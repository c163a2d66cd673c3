"""The terminal: `python -m bot ask` and `chat`. Renders Replies as plain Markdown."""
