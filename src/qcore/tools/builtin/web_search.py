"""``web_search``: ask a Tavily-compatible search API, give the model an answer and numbered sources.

The tool exists only when a provider is configured: ``web_search_provider(settings)`` returns the
provider to use, or None, and the registry adds the tool only in the first case, so the model is never
offered a search that can only fail. Providers come from ``webSearch.provider[]`` (Qwen Code's shape),
then from ``TAVILY_API_KEY``; only ``tavily`` is implemented.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.results import ToolErrorType, ToolResult

if TYPE_CHECKING:
    from qcore.settings import Settings

TAVILY_BASE_URL = "https://api.tavily.com"
MAX_RESULTS = 5
SNIPPET_CHARS = 400


@dataclass(frozen=True)
class SearchProvider:
    type: str
    api_key: str
    base_url: str = TAVILY_BASE_URL

    def __repr__(self) -> str:  # never show the key in logs or tracebacks
        return f"SearchProvider(type={self.type!r}, base_url={self.base_url!r})"


def web_search_provider(
    settings: Settings | None, env: Mapping[str, str] | None = None
) -> SearchProvider | None:
    """The configured provider, or None when web search is not set up (then do not register the tool).

    The first usable ``webSearch.provider`` entry (a tavily entry with a non-empty key) wins, then
    ``TAVILY_API_KEY``. Only tavily is implemented, so ``webSearch.default`` has nothing to choose between.
    """
    env = os.environ if env is None else env
    if settings is not None:
        configured = settings.web_search
        usable = [
            SearchProvider("tavily", entry.api_key.strip(), (entry.base_url or TAVILY_BASE_URL).rstrip("/"))
            for entry in configured.provider
            if entry.type.strip().lower() == "tavily" and entry.api_key and entry.api_key.strip()
        ]
        if usable:
            return usable[0]
    key = env.get("TAVILY_API_KEY", "").strip()
    return SearchProvider("tavily", key) if key else None


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def format_results(query: str, data: Mapping[str, Any]) -> tuple[str, int]:
    """The text for the model from a Tavily response, and how many sources it lists."""
    answer = data.get("answer")
    results = [item for item in data.get("results") or [] if isinstance(item, Mapping) and item.get("url")]
    if not results and not (isinstance(answer, str) and answer.strip()):
        return f'No results found for "{query}".', 0
    parts = [f'Web search results for "{query}":']
    if isinstance(answer, str) and answer.strip():
        parts.append(f"Answer: {answer.strip()}")
    if results:
        lines = ["Sources:"]
        for number, item in enumerate(results[:MAX_RESULTS], start=1):
            title = _one_line(str(item.get("title") or "(untitled)"), 200)
            lines.append(f"{number}. {title}\n   {item['url']}")
            snippet = _one_line(str(item.get("content") or ""), SNIPPET_CHARS)
            if snippet:
                lines.append(f"   {snippet}")
        parts.append("\n".join(lines))
        parts.append("For the full content of a source, call web_fetch with its URL.")
    return "\n\n".join(parts), min(len(results), MAX_RESULTS)


def _error_detail(body: Any) -> str:
    """Tavily says ``{"detail": {"error": "..."}}``; other services say other things."""
    if isinstance(body, Mapping):
        for key in ("detail", "error", "message"):
            value = body.get(key)
            if isinstance(value, Mapping):
                value = value.get("error") or value.get("message")
            if isinstance(value, str) and value.strip():
                return _one_line(value, 300)
    return ""


class SearchError(Exception):
    pass


class WebSearchParams(ToolParams):
    query: str = Field(description="What to search the web for.")


class WebSearch(BaseTool[WebSearchParams]):
    """Searches the web and returns an answer with numbered sources (title, URL, snippet). Use it for
    current information or things outside the workspace; follow up with web_fetch to read a source.
    """

    kind = Kind.SEARCH
    params_model = WebSearchParams

    def __init__(
        self,
        context: ToolContext | None = None,
        provider: SearchProvider | None = None,
        *,
        timeout: float = 15.0,
    ) -> None:
        """Without ``provider``, one is looked up from the context's settings and the environment."""
        super().__init__(context)
        self.provider = provider
        self.timeout = timeout

    def validate_tool_param_values(self, params: WebSearchParams) -> str | None:
        return None if params.query.strip() else "The query is empty; say what to search for."

    def get_description(self, params: WebSearchParams) -> str:
        return f'Search the web for "{params.query.strip()}"'

    async def should_confirm_execute(self, params: WebSearchParams, signal: AbortSignal) -> InfoConfirmation:
        return InfoConfirmation(
            title="Confirm Web Search", prompt=f'Search the web for "{params.query.strip()}"'
        )

    async def execute(
        self, params: WebSearchParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        query = params.query.strip()
        provider = self.provider or web_search_provider(self.context.settings if self.context else None)
        if provider is None:
            return ToolResult.failure(
                "Web search is not configured: add a tavily provider with an apiKey under webSearch.provider "
                "in settings, or set TAVILY_API_KEY.",
                ToolErrorType.WEB_SEARCH_FAILED,
            )
        try:
            data = await signal.race(self._search(provider, query))
        except SearchError as error:
            return ToolResult.failure(
                f'Web search for "{query}" failed: {error}', ToolErrorType.WEB_SEARCH_FAILED
            )
        if data is None:
            return ToolResult.failure(
                f'Web search for "{query}" was cancelled.', ToolErrorType.WEB_SEARCH_FAILED
            )
        text, count = format_results(query, data)
        return ToolResult(text, f'Searched the web for "{query}" ({count} result{"" if count == 1 else "s"})')

    async def _search(self, provider: SearchProvider, query: str) -> Mapping[str, Any]:
        import httpx

        payload = {
            "api_key": provider.api_key,
            "query": query,
            "max_results": MAX_RESULTS,
            "include_answer": True,
        }
        headers = {"Authorization": f"Bearer {provider.api_key}"}
        try:
            async with httpx.AsyncClient(timeout=httpx.Timeout(self.timeout)) as client:
                response = await client.post(f"{provider.base_url}/search", json=payload, headers=headers)
        except httpx.TimeoutException:
            raise SearchError(f"the search service did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as error:
            raise SearchError(f"{type(error).__name__}: {error}") from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            detail = _error_detail(body)
            raise SearchError(
                f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
                + (f": {detail}" if detail else "")
            )
        if not isinstance(body, Mapping):
            raise SearchError("the search service did not return a JSON object")
        return body
