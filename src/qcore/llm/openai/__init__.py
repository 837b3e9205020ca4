"""The OpenAI-compatible client: requests, the stream, message conversion, errors.

``OpenAIClient`` is the one name front ends need; the ``openai`` library itself loads only when the first
request is made.
"""

from qcore.llm.openai.client import OpenAIClient

__all__ = ["OpenAIClient"]
