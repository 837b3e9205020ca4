"""Built-in tools and the tool contract."""
