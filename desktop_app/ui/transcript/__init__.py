"""The transcript: messages, their Markdown rendered as rich text, streamed, rendered within a budget and a slice at a time."""
