"""What the user brings in Qwen Code's files (``.qwen/agents`` ...): found, parsed, trusted, listed."""
