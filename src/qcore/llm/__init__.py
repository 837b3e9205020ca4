"""Model clients: the protocol, the OpenAI-compatible client (imports ``openai`` lazily) and the scripted one."""
