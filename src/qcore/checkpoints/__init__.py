"""Snapshots of the workspace in a shadow git repository, taken per turn; undo and rewind."""
