"""The OpenAI-compatible client: requests, the stream, message conversion, errors."""
