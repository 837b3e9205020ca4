"""``web_fetch``: read one web page for the model, as Markdown.

Unlike Qwen Code, the page is not summarised by a second model call: the content (cut to a size the model
can take) goes back with the user's prompt, and the session's model does the reading. Fetching is
bounded in every direction: a timeout, a body cap, a redirect limit.

Private addresses are refused by default, because a page the model is reading can ask it to fetch
``http://169.254.169.254/`` or a router's admin page. Each hop's host is resolved and every address checked
before the request is sent (redirects included). The check and httpx's own connection resolve the name
separately, so a DNS answer that changes in between (rebinding) is not caught; the setting
``tools.webFetch.allowPrivateAddresses`` turns the guard off.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.permissions.subjects import UrlSubject
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.results import ToolErrorType, ToolResult

if TYPE_CHECKING:
    import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

PRIVATE_SETTING = "tools.webFetch.allowPrivateAddresses"
MAX_BODY_BYTES = 2_000_000
MAX_CONTENT_CHARS = 100_000
MAX_REDIRECTS = 5
USER_AGENT = "qcli-web-fetch/1"
_NOISE_TAGS = ["script", "style", "noscript", "template", "nav", "svg", "iframe", "head"]
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-yaml")


class FetchError(Exception):
    """A fetch that cannot go on; ``error_type`` says whether the network or our rules stopped it."""

    def __init__(
        self, message: str, error_type: ToolErrorType = ToolErrorType.WEB_FETCH_FALLBACK_FAILED
    ) -> None:
        super().__init__(message)
        self.error_type = error_type


def blocked_reason(address: IPAddress) -> str | None:
    """Why ``address`` is off limits without the setting, or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_private or not address.is_global:
        return "private"
    return None


async def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, as the system resolver gives them."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def github_raw_url(url: str) -> str:
    """``github.com/<owner>/<repo>/blob/<ref>/<path>`` -> the raw file, so the model gets code, not a page."""
    parts = urlsplit(url)
    segments = parts.path.split("/")
    if parts.hostname in ("github.com", "www.github.com") and len(segments) > 4 and segments[3] == "blob":
        path = "/".join(segments[1:3] + segments[4:])
        return urlunsplit(("https", "raw.githubusercontent.com", "/" + path, "", ""))
    return url


def html_to_markdown(html: str) -> str:
    """Markdown of the page body: scripts, styles and navigation dropped, images left out."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_NOISE_TAGS):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", strip=["img"]).convert_soup(soup)
    text = re.sub(r"\n[ \t]+\n", "\n\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"# {title}\n\n{text}" if title and title not in text[:200] else text


@dataclass(frozen=True)
class Page:
    url: str
    content_type: str
    body: bytes
    truncated: bool
    charset: str | None


class WebFetchParams(ToolParams):
    url: str = Field(description="The http:// or https:// URL to fetch.")
    prompt: str = Field(description="What to look for or do with the page's content.")


class WebFetch(BaseTool[WebFetchParams]):
    """Fetches a web page (http or https) and returns its content as Markdown, with your prompt, for you
    to read. Use it for documentation, issues or articles whose URL you know; GitHub file links return the
    raw file. Large pages are cut.
    """

    kind = Kind.FETCH
    params_model = WebFetchParams

    def __init__(
        self,
        context: ToolContext | None = None,
        *,
        timeout: float = 10.0,
        max_bytes: int = MAX_BODY_BYTES,
        resolver: Resolver = resolve_host,
        is_blocked: Callable[[IPAddress], str | None] = blocked_reason,
    ) -> None:
        """``resolver`` and ``is_blocked`` are seams for tests and for embedders with stricter rules."""
        super().__init__(context)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._resolve = resolver
        self._blocked = is_blocked

    def validate_tool_param_values(self, params: WebFetchParams) -> str | None:
        parts = urlsplit(params.url.strip())
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return f"The url must be an http:// or https:// address with a host, got {params.url!r}."
        if not params.prompt.strip():
            return "The prompt must say what to look for in the page; it is empty."
        return None

    def permission_subject(self, params: WebFetchParams) -> UrlSubject:
        return UrlSubject(params.url)

    def get_description(self, params: WebFetchParams) -> str:
        return f"Fetch {params.url.strip()}"

    async def should_confirm_execute(self, params: WebFetchParams, signal: AbortSignal) -> InfoConfirmation:
        url = params.url.strip()
        return InfoConfirmation(
            title="Confirm Web Fetch", prompt=f"Fetch {url}: {params.prompt}", urls=(url,)
        )

    @property
    def allow_private(self) -> bool:
        settings = self.context.settings if self.context is not None else None
        return bool(settings and settings.tools.web_fetch.allow_private_addresses)

    async def execute(
        self, params: WebFetchParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        url = github_raw_url(params.url.strip())
        try:
            page = await signal.race(self._fetch(url))
            if page is None:
                return ToolResult.failure(
                    f"Fetching {url} was cancelled.", ToolErrorType.WEB_FETCH_FALLBACK_FAILED
                )
            content, how = self._content(page)
        except FetchError as error:
            return ToolResult.failure(f"Could not fetch {url}: {error}", error.error_type)
        notes = []
        if page.truncated:
            notes.append(f"Only the first {self.max_bytes:,} bytes of the response were read.")
        if len(content) > MAX_CONTENT_CHARS:
            notes.append(f"Content cut to {MAX_CONTENT_CHARS:,} of {len(content):,} characters.")
            content = content[:MAX_CONTENT_CHARS]
        header = f"Content of {page.url} ({how})"
        if page.url != params.url.strip():
            header += f", requested as {params.url.strip()}"
        lines = [header + ".", f"Prompt: {params.prompt.strip()}", *notes]
        llm = "\n".join(lines) + f"\n\n---\n{content}\n---"
        return ToolResult(llm, f"Fetched {page.url} ({len(content):,} characters)")

    # --- fetching ---------------------------------------------------------------------------------

    async def _check_host(self, url: httpx.URL) -> None:
        if self.allow_private:
            return
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            addresses = await self._resolve(url.raw_host.decode("ascii"), port)
        except OSError as error:
            raise FetchError(f"cannot resolve {url.host}: {error.strerror or error}") from None
        for text in addresses:
            try:
                address = ipaddress.ip_address(text.split("%", 1)[0])
            except ValueError:
                raise FetchError(f"{url.host} resolved to an unusable address {text!r}") from None
            reason = self._blocked(address)
            if reason:
                raise FetchError(
                    f"{url.host} resolves to {address}, a {reason} address. Fetching private, loopback "
                    f"and link-local addresses is off; set {PRIVATE_SETTING} to true to allow it.",
                    ToolErrorType.WEB_FETCH_PROCESSING_ERROR,
                )

    async def _fetch(self, url: str) -> Page:
        import httpx

        timeout = httpx.Timeout(self.timeout)
        headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/plain, text/markdown, */*;q=0.5"}
        try:
            async with (
                asyncio.timeout(self.timeout * 3),
                httpx.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False) as client,
            ):
                target = httpx.URL(url)
                for _ in range(MAX_REDIRECTS + 1):
                    if target.scheme not in ("http", "https"):
                        raise FetchError(
                            f"redirected to {target}, which is not http or https",
                            ToolErrorType.WEB_FETCH_PROCESSING_ERROR,
                        )
                    await self._check_host(target)
                    async with client.stream("GET", target) as response:
                        location = response.headers.get("location")
                        if response.is_redirect and location:
                            target = response.url.join(location)
                            continue
                        if response.status_code >= 400:
                            raise FetchError(f"HTTP {response.status_code} {response.reason_phrase}".rstrip())
                        body, truncated = await self._read(response)
                        content_type = response.headers.get("content-type", "")
                        return Page(
                            str(response.url), content_type, body, truncated, response.charset_encoding
                        )
                raise FetchError(
                    f"more than {MAX_REDIRECTS} redirects", ToolErrorType.WEB_FETCH_PROCESSING_ERROR
                )
        except TimeoutError:
            raise FetchError(f"timed out after {self.timeout * 3:g} s") from None
        except httpx.TimeoutException:
            raise FetchError(f"timed out (no response within {self.timeout:g} s)") from None
        except httpx.InvalidURL as error:
            raise FetchError(f"invalid URL: {error}", ToolErrorType.WEB_FETCH_PROCESSING_ERROR) from None
        except httpx.HTTPError as error:
            raise FetchError(f"{type(error).__name__}: {error}") from None

    async def _read(self, response: httpx.Response) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_bytes:
                return b"".join(chunks)[: self.max_bytes], True
        return b"".join(chunks), False

    def _content(self, page: Page) -> tuple[str, str]:
        """The page as text, and how it was made; binary content is refused."""
        mime = page.content_type.split(";", 1)[0].strip().lower()
        is_html = mime in ("text/html", "application/xhtml+xml")
        textual = (
            is_html
            or mime.startswith("text/")
            or mime in _TEXT_TYPES
            or mime.endswith(("+json", "+xml"))
            or (not mime and b"\x00" not in page.body[:8192])
        )
        if not textual:
            raise FetchError(
                f"the response is {mime or 'binary'} content, which web_fetch cannot read as text",
                ToolErrorType.WEB_FETCH_PROCESSING_ERROR,
            )
        try:
            text = page.body.decode(page.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            text = page.body.decode("utf-8", errors="replace")
        if is_html or (not mime and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))):
            return html_to_markdown(text), "HTML converted to Markdown"
        return text, mime or "text"
