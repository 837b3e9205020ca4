"""web_fetch against real HTTP servers on loopback addresses; nothing here reaches the internet."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.web_fetch import (
    MAX_CONTENT_CHARS,
    PRIVATE_SETTING,
    IPAddress,
    WebFetch,
    blocked_reason,
    github_raw_url,
    html_to_markdown,
)
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.local_http import LocalHTTPServer, QuietHandler

# --- a small scripted web server ---------------------------------------------------------------------


@dataclass
class Route:
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    status: int = 200
    location: str | None = None
    delay: float = 0.0


@dataclass
class WebServer:
    """Serves ``routes`` by path on ``host``; records every path asked for."""

    host: str = "127.0.0.1"
    routes: dict[str, Route] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.httpd = LocalHTTPServer(self.host, _Handler, self)

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.httpd.port}{path}"

    def close(self) -> None:
        self.stopping.set()
        self.httpd.stop()


class _Handler(QuietHandler):
    server: LocalHTTPServer[WebServer]

    def do_GET(self) -> None:
        web = self.server.owner
        web.hits.append(self.path)
        route = web.routes.get(self.path, Route(b"no such page", status=404))
        if route.delay and web.stopping.wait(route.delay):
            return
        try:
            self.send_response(route.status)
            self.send_header("Content-Type", route.content_type)
            self.send_header("Content-Length", str(len(route.body)))
            if route.location is not None:
                self.send_header("Location", route.location)
            self.end_headers()
            self.wfile.write(route.body)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def web() -> Iterator[WebServer]:
    server = WebServer()
    yield server
    server.close()


def context(tmp_path: Path, *, allow_private: bool) -> ToolContext:
    settings = Settings.model_validate({"tools": {"webFetch": {"allowPrivateAddresses": allow_private}}})
    return ToolContext(Workspace([tmp_path]), settings)


async def fetch(
    tool: WebFetch, url: str, prompt: str = "Summarise it", signal: AbortSignal | None = None
) -> ToolResult:
    return await tool.execute(tool.build({"url": url, "prompt": prompt}), signal or AbortSignal())


def body_of(result: ToolResult) -> str:
    """The fetched content between the fences of llm_content."""
    return result.text().split("\n---\n", 1)[1].rsplit("\n---", 1)[0]


# --- the address guard -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("172.16.5.4", "private"),
        ("100.64.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fd00::1", "private"),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_blocked_reason(address: str, reason: str | None) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


async def test_loopback_is_refused_by_default_and_nothing_is_sent(tmp_path: Path, web: WebServer) -> None:
    web.routes["/secret"] = Route(b"internal data")
    tool = WebFetch(ToolContext(Workspace([tmp_path])))  # no settings at all: the guard is on
    result = await fetch(tool, web.url("/secret"))
    assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_PROCESSING_ERROR
    assert "loopback" in result.text() and PRIVATE_SETTING in result.text()
    assert web.hits == []
    refused = await fetch(WebFetch(context(tmp_path, allow_private=False)), web.url("/secret"))
    assert not refused.ok and web.hits == []


async def test_every_resolved_address_is_checked(tmp_path: Path) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        assert (host, port) == ("mixed.example", 8080)
        return ["93.184.216.34", "10.0.0.7"]

    tool = WebFetch(context(tmp_path, allow_private=False), resolver=resolver)
    result = await fetch(tool, "http://mixed.example:8080/")
    assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_PROCESSING_ERROR
    assert "10.0.0.7, a private address" in result.text()


async def test_international_names_are_resolved_in_their_ascii_form(tmp_path: Path) -> None:
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["192.168.1.1"]

    result = await fetch(
        WebFetch(context(tmp_path, allow_private=False), resolver=resolver), "https://bücher.example/"
    )
    assert asked == ["xn--bcher-kva.example"] and not result.ok


async def test_unresolvable_host_is_a_fetch_failure(tmp_path: Path) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    result = await fetch(
        WebFetch(context(tmp_path, allow_private=False), resolver=resolver), "https://nowhere.test/"
    )
    assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_FALLBACK_FAILED
    assert "cannot resolve nowhere.test" in result.text()


async def test_a_redirect_into_a_blocked_address_is_refused(tmp_path: Path) -> None:
    """Two real servers: 127.0.0.1 counts as allowed here, 127.0.0.2 as blocked. The redirect from the
    first to the second must be checked like the first request was, and never reach the second."""
    try:
        inner = WebServer(host="127.0.0.2")
    except OSError:
        pytest.skip("127.0.0.2 is not a usable loopback address on this system")
    outer = WebServer()
    try:
        inner.routes["/admin"] = Route(b"router admin page")
        outer.routes["/go"] = Route(status=302, location=inner.url("/admin"))

        def only_second_blocked(address: IPAddress) -> str | None:
            return "loopback" if address == ipaddress.ip_address("127.0.0.2") else None

        tool = WebFetch(context(tmp_path, allow_private=False), is_blocked=only_second_blocked)
        result = await fetch(tool, outer.url("/go"))
        assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_PROCESSING_ERROR
        assert "127.0.0.2, a loopback address" in result.text() and PRIVATE_SETTING in result.text()
        assert outer.hits == ["/go"] and inner.hits == []
        # The same redirect with the setting on is followed to the end.
        allowed = await fetch(WebFetch(context(tmp_path, allow_private=True)), outer.url("/go"))
        assert allowed.ok and body_of(allowed) == "router admin page" and inner.hits == ["/admin"]
    finally:
        outer.close()
        inner.close()


# --- fetching --------------------------------------------------------------------------------------


PAGE = b"""<!doctype html><html><head><title>Release notes</title><style>body{color:red}</style>
<script>var tracking = "do-not-show";</script></head>
<body><nav><a href="/home">Home</a> | <a href="/menu">Menu</a></nav>
<h1>Version 2.0</h1><p>Adds <b>streaming</b> and a <a href="https://example.org/docs">guide</a>.</p>
<ul><li>first</li><li>second</li></ul><img src="x.png" alt="logo"><noscript>enable js</noscript></body></html>"""


async def test_html_becomes_markdown_without_noise(tmp_path: Path, web: WebServer) -> None:
    web.routes["/notes"] = Route(PAGE, "text/html; charset=utf-8")
    result = await fetch(WebFetch(context(tmp_path, allow_private=True)), web.url("/notes"), "What is new?")
    assert result.ok
    content = body_of(result)
    assert content.startswith("# Release notes\n\n# Version 2.0")
    assert "Adds **streaming** and a [guide](https://example.org/docs)." in content
    assert re.search(r"^\* first$", content, re.M) and re.search(r"^\* second$", content, re.M)
    for noise in ("do-not-show", "color:red", "Menu", "enable js", "logo", "x.png"):
        assert noise not in content
    assert result.text().startswith(f"Content of {web.url('/notes')} (HTML converted to Markdown).")
    assert "Prompt: What is new?" in result.text()
    assert result.return_display == f"Fetched {web.url('/notes')} ({len(content):,} characters)"


async def test_text_and_json_are_returned_as_they_are(tmp_path: Path, web: WebServer) -> None:
    web.routes["/a.txt"] = Route("line one\n  <b>not html</b>\nü\n".encode())
    web.routes["/data"] = Route(b'{"key": [1, 2]}', "application/json")
    tool = WebFetch(context(tmp_path, allow_private=True))
    text = await fetch(tool, web.url("/a.txt"))
    assert body_of(text) == "line one\n  <b>not html</b>\nü\n"
    data = await fetch(tool, web.url("/data"))
    assert body_of(data) == '{"key": [1, 2]}' and "(application/json)" in data.text()


async def test_binary_content_is_refused(tmp_path: Path, web: WebServer) -> None:
    web.routes["/logo.png"] = Route(b"\x89PNG\r\n\x1a\n\x00\x00", "image/png")
    result = await fetch(WebFetch(context(tmp_path, allow_private=True)), web.url("/logo.png"))
    assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_PROCESSING_ERROR
    assert "image/png" in result.text()


async def test_body_is_read_only_up_to_the_cap(tmp_path: Path, web: WebServer) -> None:
    web.routes["/big"] = Route(b"x" * 50_000)
    result = await fetch(WebFetch(context(tmp_path, allow_private=True), max_bytes=10_000), web.url("/big"))
    assert result.ok
    assert body_of(result) == "x" * 10_000
    assert "Only the first 10,000 bytes of the response were read." in result.text()


async def test_content_is_cut_for_the_model(tmp_path: Path, web: WebServer) -> None:
    web.routes["/long"] = Route(b"y" * (MAX_CONTENT_CHARS + 5_000))
    result = await fetch(WebFetch(context(tmp_path, allow_private=True)), web.url("/long"))
    assert len(body_of(result)) == MAX_CONTENT_CHARS
    assert (
        f"Content cut to {MAX_CONTENT_CHARS:,} of {MAX_CONTENT_CHARS + 5_000:,} characters." in result.text()
    )
    assert "bytes of the response were read" not in result.text()


async def test_a_slow_server_times_out(tmp_path: Path, web: WebServer) -> None:
    web.routes["/slow"] = Route(b"late", delay=5)
    started = time.monotonic()
    result = await fetch(WebFetch(context(tmp_path, allow_private=True), timeout=0.2), web.url("/slow"))
    assert time.monotonic() - started < 3
    assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_FALLBACK_FAILED
    assert "timed out" in result.text()


async def test_http_errors_name_the_status(tmp_path: Path, web: WebServer) -> None:
    result = await fetch(WebFetch(context(tmp_path, allow_private=True)), web.url("/missing"))
    assert result.error is not None and result.error.type is ToolErrorType.WEB_FETCH_FALLBACK_FAILED
    assert "HTTP 404" in result.text()


async def test_redirects_are_followed_up_to_a_limit(tmp_path: Path, web: WebServer) -> None:
    web.routes["/old"] = Route(status=301, location="/new")
    web.routes["/new"] = Route(b"moved here")
    web.routes["/loop"] = Route(status=302, location="/loop")
    web.routes["/file"] = Route(status=302, location="file:///etc/passwd")
    tool = WebFetch(context(tmp_path, allow_private=True))
    moved = await fetch(tool, web.url("/old"))
    assert moved.ok and body_of(moved) == "moved here"
    assert moved.text().startswith(
        f"Content of {web.url('/new')} (text/plain), requested as {web.url('/old')}."
    )
    loop = await fetch(tool, web.url("/loop"))
    assert loop.error is not None and loop.error.type is ToolErrorType.WEB_FETCH_PROCESSING_ERROR
    assert "more than 5 redirects" in loop.text() and web.hits.count("/loop") == 6
    scheme = await fetch(tool, web.url("/file"))
    assert not scheme.ok and "not http or https" in scheme.text()


async def test_cancelling_stops_the_request(tmp_path: Path, web: WebServer) -> None:
    web.routes["/slow"] = Route(b"late", delay=5)
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.1, signal.abort)
    started = time.monotonic()
    result = await fetch(WebFetch(context(tmp_path, allow_private=True)), web.url("/slow"), signal=signal)
    assert time.monotonic() - started < 2
    assert not result.ok and "cancelled" in result.text()


# --- parameters ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)", "example.com", "http://"]
)
def test_only_http_and_https_urls_are_accepted(tmp_path: Path, url: str) -> None:
    with pytest.raises(ToolParamsError, match="http:// or https://"):
        WebFetch(context(tmp_path, allow_private=False)).build({"url": url, "prompt": "read"})


def test_an_empty_prompt_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolParamsError, match="prompt"):
        WebFetch().build({"url": "https://example.com", "prompt": "  "})


async def test_confirmation_names_the_url() -> None:
    tool = WebFetch()
    params = tool.build({"url": "https://example.com/a", "prompt": "find the price"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert isinstance(question, InfoConfirmation)
    assert question.title == "Confirm Web Fetch" and question.urls == ("https://example.com/a",)
    assert "find the price" in question.prompt


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://github.com/owner/repo/blob/main/src/app.py",
            "https://raw.githubusercontent.com/owner/repo/main/src/app.py",
        ),
        (
            "https://www.github.com/o/r/blob/v1.2/README.md?plain=1#L3",
            "https://raw.githubusercontent.com/o/r/v1.2/README.md",
        ),
        ("https://github.com/owner/repo/tree/main/src", "https://github.com/owner/repo/tree/main/src"),
        ("https://github.com/owner/repo", "https://github.com/owner/repo"),
        ("https://gitlab.com/o/r/blob/main/x.py", "https://gitlab.com/o/r/blob/main/x.py"),
    ],
)
def test_github_blob_urls_become_raw(url: str, expected: str) -> None:
    assert github_raw_url(url) == expected


def test_html_to_markdown_keeps_structure() -> None:
    markdown = html_to_markdown("<h2>Usage</h2><pre><code>pip install x</code></pre><p>Then run it.</p>")
    assert markdown.startswith("## Usage")
    assert "pip install x" in markdown and markdown.endswith("Then run it.")
