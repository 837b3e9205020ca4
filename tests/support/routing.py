"""A script for the scripted OpenAI server that answers several conversations at once (a session and its
subagents), each from its own list, told apart by the system prompt the request carries."""

from __future__ import annotations

import threading
from typing import Any

from tests.support.openai_server import Reply, ScriptedOpenAIServer


class ByConversation:
    """Each request is answered from the list of the first key its system prompt contains."""

    def __init__(self, **scripts: list[Reply]) -> None:
        self.scripts = {key.replace("_", "-"): list(replies) for key, replies in scripts.items()}
        self.seen: dict[str, list[dict[str, Any]]] = {key: [] for key in self.scripts}
        """The request bodies each conversation sent, in order."""
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or [{}]
        system = messages[0].get("content") if messages[0].get("role") == "system" else ""
        with self._lock:
            for key, replies in self.scripts.items():
                if key in str(system):
                    self.seen[key].append(body)
                    if not replies:
                        raise AssertionError(f"conversation {key!r} has no reply left")
                    return replies.pop(0)
        raise AssertionError(f"no conversation's key is in the system prompt: {str(system)[:200]!r}")

    def serve(self, server: ScriptedOpenAIServer, requests: int = 40) -> ByConversation:
        server.script.extend([self] * requests)
        return self

    def tools(self, key: str, request: int = 0) -> list[str]:
        """The names of the tools declared in a conversation's ``request``-th request."""
        return [tool["function"]["name"] for tool in self.seen[key][request].get("tools") or []]
