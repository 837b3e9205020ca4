"""web_search against a scripted Tavily-compatible server on 127.0.0.1, and provider detection."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.web_search import (
    TAVILY_BASE_URL,
    SearchProvider,
    WebSearch,
    format_results,
    web_search_provider,
)
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.results import ToolErrorType
from tests.support.local_http import LocalHTTPServer, QuietHandler


@dataclass
class SearchServer:
    """Answers ``POST /search`` with ``status`` and ``reply`` (bytes sent as is, anything else as JSON)."""

    status: int = 200
    reply: Any = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.httpd = LocalHTTPServer("127.0.0.1", _Handler, self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.port}/v1"

    def close(self) -> None:
        self.httpd.stop()


class _Handler(QuietHandler):
    server: LocalHTTPServer[SearchServer]

    def do_POST(self) -> None:
        search = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        search.requests.append((self.path, headers, json.loads(raw)))
        body = search.reply if isinstance(search.reply, bytes) else json.dumps(search.reply).encode()
        self.send_response(search.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[SearchServer]:
    running = SearchServer()
    yield running
    running.close()


def tool_for(server: SearchServer, tmp_path: Path) -> WebSearch:
    return WebSearch(
        ToolContext(Workspace([tmp_path])), SearchProvider("tavily", "tvly-secret", server.base_url)
    )


RESULTS = [
    {
        "title": "Python 3.13 released",
        "url": "https://python.org/3.13",
        "content": "The  new\nrelease adds a JIT.",
    },
    {"title": "What's new", "url": "https://docs.python.org/whatsnew", "content": "x" * 1000, "score": 0.9},
    {"title": "", "url": "https://example.org/untitled", "content": ""},
    {"title": "no url is skipped", "content": "ignored"},
]


async def test_answer_and_numbered_sources(server: SearchServer, tmp_path: Path) -> None:
    server.reply = {
        "query": "python 3.13",
        "answer": "Python 3.13 came out in October 2024.",
        "results": RESULTS,
    }
    tool = tool_for(server, tmp_path)
    result = await tool.execute(tool.build({"query": "  python 3.13 "}), AbortSignal())
    assert result.ok
    [(path, headers, body)] = server.requests
    assert path == "/v1/search"
    assert body == {
        "api_key": "tvly-secret",
        "query": "python 3.13",
        "max_results": 5,
        "include_answer": True,
    }
    assert headers["authorization"] == "Bearer tvly-secret"
    text = result.text()
    assert text.startswith(
        'Web search results for "python 3.13":\n\nAnswer: Python 3.13 came out in October 2024.\n\nSources:\n'
        "1. Python 3.13 released\n   https://python.org/3.13\n   The new release adds a JIT.\n"
        "2. What's new\n   https://docs.python.org/whatsnew\n   " + "x" * 397 + "...\n"
        "3. (untitled)\n   https://example.org/untitled\n\n"
    )
    assert text.endswith("call web_fetch with its URL.")
    assert "no url is skipped" not in text
    assert result.return_display == 'Searched the web for "python 3.13" (3 results)'


def test_results_without_an_answer_are_capped_at_five() -> None:
    many = [{"title": f"T{n}", "url": f"https://e.org/{n}", "content": f"c{n}"} for n in range(1, 9)]
    text, count = format_results("q", {"results": many})
    assert count == 5 and "Answer:" not in text
    assert "5. T5\n   https://e.org/5\n   c5" in text and "T6" not in text


def test_nothing_found() -> None:
    assert format_results("zzz", {"results": [], "answer": None}) == ('No results found for "zzz".', 0)
    text, count = format_results("q", {"answer": "Only an answer."})
    assert count == 0 and "Answer: Only an answer." in text and "Sources" not in text


async def test_http_errors_carry_the_status_and_detail_but_not_the_key(
    server: SearchServer, tmp_path: Path
) -> None:
    server.status = 401
    server.reply = {"detail": {"error": "Unauthorized: missing or invalid API key."}}
    tool = tool_for(server, tmp_path)
    result = await tool.execute(tool.build({"query": "x"}), AbortSignal())
    assert result.error is not None and result.error.type is ToolErrorType.WEB_SEARCH_FAILED
    assert "HTTP 401" in result.text() and "missing or invalid API key" in result.text()
    assert "tvly-secret" not in result.text()


async def test_a_non_json_reply_fails(server: SearchServer, tmp_path: Path) -> None:
    server.reply = b"<html>gateway</html>"
    tool = tool_for(server, tmp_path)
    result = await tool.execute(tool.build({"query": "x"}), AbortSignal())
    assert result.error is not None and result.error.type is ToolErrorType.WEB_SEARCH_FAILED
    assert "did not return a JSON object" in result.text()


async def test_an_unreachable_service_fails(tmp_path: Path) -> None:
    with socket_port() as port:  # a port nothing listens on
        tool = WebSearch(None, SearchProvider("tavily", "k", f"http://127.0.0.1:{port}"))
        result = await tool.execute(tool.build({"query": "x"}), AbortSignal())
    assert result.error is not None and result.error.type is ToolErrorType.WEB_SEARCH_FAILED
    assert "ConnectError" in result.text()


@contextlib.contextmanager
def socket_port() -> Iterator[int]:
    """A free port, held bound but not listening, so connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


async def test_without_a_provider_the_call_explains_the_setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    tool = WebSearch(ToolContext(Workspace([tmp_path]), Settings()))
    result = await tool.execute(tool.build({"query": "x"}), AbortSignal())
    assert result.error is not None and result.error.type is ToolErrorType.WEB_SEARCH_FAILED
    assert "TAVILY_API_KEY" in result.text()


def test_an_empty_query_is_refused() -> None:
    tool = WebSearch()
    with pytest.raises(ToolParamsError, match="query is empty"):
        tool.build({"query": " "})


async def test_confirmation() -> None:
    tool = WebSearch()
    question = await tool.should_confirm_execute(tool.build({"query": "rust async"}), AbortSignal())
    assert isinstance(question, InfoConfirmation)
    assert question.title == "Confirm Web Search" and "rust async" in question.prompt


# --- provider detection ---------------------------------------------------------------------------


def settings_with(web_search: dict[str, Any]) -> Settings:
    return Settings.model_validate({"webSearch": web_search})


def test_provider_from_settings() -> None:
    settings = settings_with(
        {
            "provider": [
                {"type": "google", "apiKey": "g", "searchEngineId": "cx"},
                {"type": "tavily", "apiKey": "tvly-1", "baseUrl": "https://search.internal/tavily/"},
            ],
            "default": "google",
        }
    )
    provider = web_search_provider(settings, env={"TAVILY_API_KEY": "from-env"})
    assert provider == SearchProvider("tavily", "tvly-1", "https://search.internal/tavily")
    assert "tvly-1" not in repr(provider)


def test_provider_from_the_environment() -> None:
    assert web_search_provider(Settings(), env={"TAVILY_API_KEY": " tvly-env "}) == SearchProvider(
        "tavily", "tvly-env", TAVILY_BASE_URL
    )
    assert web_search_provider(None, env={"TAVILY_API_KEY": "k"}) == SearchProvider("tavily", "k")
    # An entry whose key substituted to "" (``${TAVILY_API_KEY:-}``) does not count.
    empty = settings_with({"provider": [{"type": "tavily", "apiKey": ""}]})
    assert web_search_provider(empty, env={"TAVILY_API_KEY": "k"}) == SearchProvider("tavily", "k")


def test_no_provider_means_no_tool() -> None:
    assert web_search_provider(Settings(), env={}) is None
    assert web_search_provider(None, env={"TAVILY_API_KEY": "  "}) is None
    google_only = settings_with({"provider": [{"type": "google", "apiKey": "g"}], "default": "google"})
    assert web_search_provider(google_only, env={}) is None


def test_provider_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-os")
    assert web_search_provider(Settings()) == SearchProvider("tavily", "tvly-os")
