"""What a bash line will run, read before it runs: the parse, the byte-level grammar, the walk, wrappers, option tables and the read-only commands.

``python -m qcore.shell 'cmd'`` prints the analysis."""
