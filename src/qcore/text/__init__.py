"""Pure text algorithms: diffs and their alignment, lines, regions, line endings."""
