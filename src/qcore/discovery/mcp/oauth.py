"""Signing in to MCP servers that ask for OAuth: the MCP SDK's client flow, with qcli's token file.

``qcli mcp login NAME`` runs the whole flow once (discovery, dynamic client registration, PKCE, the
browser, a local callback on 127.0.0.1); the tokens and the registered client are kept in
``~/.qwen/mcp-oauth-tokens.json``, readable by the user only (0600, written atomically). From then on
every connection to that server carries the token, refreshed with the refresh token when it has
expired; when it cannot be refreshed the connection fails and says to sign in again. Nothing here opens
a browser by itself outside ``login``. ``qcli mcp logout NAME`` forgets the server's tokens.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

__all__ = ["NeedsLogin", "TokenFile", "forget", "oauth_auth", "signed_in", "tokens_path"]


class NeedsLogin(Exception):
    """The server asks for a sign-in that only ``qcli mcp login`` may start."""


def tokens_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".qwen" / "mcp-oauth-tokens.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    """The whole file, replaced at once, never readable by anyone but the user."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".mcp-oauth-", suffix=".json")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def signed_in(name: str, url: str, home: Path | None = None) -> bool:
    entry = _read(tokens_path(home)).get(name)
    return isinstance(entry, dict) and entry.get("url") == url and bool(entry.get("tokens"))


def forget(name: str, home: Path | None = None) -> bool:
    path = tokens_path(home)
    data = _read(path)
    if name not in data:
        return False
    del data[name]
    _write(path, data)
    return True


class TokenFile:
    """The SDK's ``TokenStorage`` for one server, in the shared file; the expiry is kept as a time of day,
    so a token read back after a restart is known to be stale."""

    def __init__(self, name: str, url: str, home: Path | None = None) -> None:
        self.name, self.url, self.path = name, url, tokens_path(home)

    def _entry(self) -> dict[str, Any]:
        entry = _read(self.path).get(self.name)
        return entry if isinstance(entry, dict) and entry.get("url") == self.url else {"url": self.url}

    def _save(self, **changes: Any) -> None:
        data = _read(self.path)
        data[self.name] = {**self._entry(), **changes}
        _write(self.path, data)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        entry = self._entry()
        if not isinstance(entry.get("tokens"), dict):
            return None
        tokens = dict(entry["tokens"])
        if isinstance(entry.get("expires_at"), int | float):
            tokens["expires_in"] = max(0, int(entry["expires_at"] - time.time()))
        return OAuthToken.model_validate(tokens)

    async def set_tokens(self, tokens: Any) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in else None
        self._save(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        client = self._entry().get("client")
        return OAuthClientInformationFull.model_validate(client) if isinstance(client, dict) else None

    async def set_client_info(self, client_info: Any) -> None:
        self._save(client=client_info.model_dump(mode="json", exclude_none=True))

    def reset(self) -> None:
        """A new sign-in: a new client registration (its callback address changes) and new tokens."""
        data = _read(self.path)
        data[self.name] = {"url": self.url}
        _write(self.path, data)


async def _no_login(url: str) -> None:
    raise NeedsLogin("the server asks you to sign in")


def oauth_auth(
    name: str,
    url: str,
    home: Path | None = None,
    *,
    redirect_uri: str = "http://127.0.0.1/oauth/callback",
    redirect: Callable[[str], Awaitable[None]] | None = None,
    callback: Callable[[], Awaitable[Any]] | None = None,
) -> Any:
    """An ``httpx2.Auth`` that signs requests to ``url`` with the server's stored token (refreshing it);
    with ``redirect`` and ``callback`` it runs the browser sign-in, else a sign-in it would need fails
    with ``NeedsLogin``."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            # The SDK reads stored tokens without their expiry, so a stale token would be sent (and the
            # whole sign-in started) instead of refreshed: the expiry the file kept is applied here.
            await super()._initialize()
            if self.context.current_tokens is not None:
                self.context.update_token_expiry(self.context.current_tokens)

    metadata = OAuthClientMetadata(
        client_name="qcli",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return Provider(
        server_url=url,
        client_metadata=metadata,
        storage=TokenFile(name, url, home),
        redirect_handler=redirect or _no_login,
        callback_handler=callback,
    )
