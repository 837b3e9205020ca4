"""An MCP server behind OAuth, built with the official SDK's authorization-server support: dynamic client
registration, PKCE, refresh tokens, and an authorize step that approves at once (a test's stand-in for
the user clicking "allow" in a browser).

Usage::

    python tests/support/mcp_oauth_server.py --port 8123 [--token-seconds 3600]

Streamable HTTP at ``http://127.0.0.1:PORT/mcp``. Tool: ``whoami`` (the client id the token was issued to).
Every token issued and refreshed is logged on stderr as ``issued <kind> <token>``.
"""

import argparse
import secrets
import sys
import time
from typing import Any


def build(port: int, token_seconds: int) -> Any:
    from mcp.server.auth.provider import (
        AccessToken,
        AuthorizationCode,
        AuthorizationParams,
        RefreshToken,
        construct_redirect_uri,
    )
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    base = f"http://127.0.0.1:{port}"

    class Provider:
        def __init__(self) -> None:
            self.clients: dict[str, OAuthClientInformationFull] = {}
            self.codes: dict[str, AuthorizationCode] = {}
            self.access: dict[str, AccessToken] = {}
            self.refresh: dict[str, RefreshToken] = {}

        async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
            return self.clients.get(client_id)

        async def register_client(self, client_info: OAuthClientInformationFull) -> None:
            assert client_info.client_id is not None
            self.clients[client_info.client_id] = client_info

        async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
            code = secrets.token_hex(16)
            self.codes[code] = AuthorizationCode(
                code=code,
                scopes=params.scopes or [],
                expires_at=time.time() + 300,
                client_id=client.client_id or "",
                code_challenge=params.code_challenge,
                redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                resource=params.resource,
            )
            return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

        async def load_authorization_code(self, client: Any, authorization_code: str) -> Any:
            return self.codes.get(authorization_code)

        def _issue(self, client_id: str, scopes: list[str], resource: Any) -> OAuthToken:
            access, refresh = secrets.token_hex(16), secrets.token_hex(16)
            expires = int(time.time()) + token_seconds
            self.access[access] = AccessToken(
                token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
            )
            self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
            sys.stderr.write(f"issued access {access}\n")
            sys.stderr.flush()
            return OAuthToken(
                access_token=access, expires_in=token_seconds, refresh_token=refresh, scope=" ".join(scopes)
            )

        async def exchange_authorization_code(self, client: Any, authorization_code: Any) -> OAuthToken:
            self.codes.pop(authorization_code.code, None)
            return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

        async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
            return self.refresh.get(refresh_token)

        async def exchange_refresh_token(
            self, client: Any, refresh_token: Any, scopes: list[str]
        ) -> OAuthToken:
            self.refresh.pop(refresh_token.token, None)
            sys.stderr.write("refreshed\n")
            return self._issue(client.client_id, scopes or refresh_token.scopes, None)

        async def load_access_token(self, token: str) -> Any:
            found = self.access.get(token)
            if found is None or (found.expires_at is not None and found.expires_at < time.time()):
                return None
            return found

        async def revoke_token(self, token: Any) -> None:
            self.access.pop(getattr(token, "token", ""), None)

    server = MCPServer(
        "oauth-test",
        auth_server_provider=Provider(),
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
        ),
    )

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The client the request's token was issued to."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return f"client {token.client_id}" if token else "anonymous"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-seconds", type=int, default=3600)
    args = parser.parse_args()
    build(args.port, args.token_seconds).run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
