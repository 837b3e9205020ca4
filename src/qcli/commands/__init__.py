"""Slash commands, shared by the TUI and ACP: the table, and one module per topic."""
