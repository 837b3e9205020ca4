"""What a conversation is made of: its saved state, the system prompt, context files, @mentions, the context window and compression."""
