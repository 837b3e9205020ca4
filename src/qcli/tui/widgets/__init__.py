"""The TUI's widgets, one module each; importing this package imports none of them (start-up stays cheap)."""
