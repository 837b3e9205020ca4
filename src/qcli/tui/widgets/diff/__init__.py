"""The diff view: rows, rendering and highlighting of only what is visible."""
