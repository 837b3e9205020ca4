"""Searching the workspace: ``grep_search`` with its backends (ripgrep, git grep, Python) and ``glob``."""
