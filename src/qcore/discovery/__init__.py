"""Tools found at run time: a discovery command, MCP servers (and Python plugins, in qcore.discovery.plugins)."""
