"""``qcli mcp list | add | remove | login | logout``: manage MCP servers the way Qwen Code's and Claude Code's commands do.

``add`` writes ``mcpServers.<name>`` to the project's ``.qwen/settings.json`` (``--scope project``, the
default, as in Qwen Code) or the user's ``~/.qwen/settings.json``, keeping the file's comments and layout;
``remove`` takes it out again; ``list`` connects to every configured server (each up to its own timeout)
and says, per server, connected with its tool count, or failed and why (its lines made ``visible``: a
server's error is its own text).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qcli.terminal_text import visible

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="qcli mcp", description="Manage MCP servers in settings.json.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="connect to every configured server and show its state and tools")
    add = commands.add_parser(
        "add",
        help="add a server: NAME COMMAND [ARGS...] (stdio), or NAME --url URL (SSE) / --http-url URL (HTTP)",
    )
    add.add_argument("name")
    add.add_argument("command_line", nargs="*", metavar="COMMAND [ARGS...]")
    add.add_argument("--url", help="an SSE server's URL")
    add.add_argument("--http-url", help="a streamable HTTP server's URL")
    add.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE")
    add.add_argument("-H", "--header", action="append", default=[], metavar="'Name: value'")
    add.add_argument("--timeout", type=int, metavar="MS", help="request timeout in milliseconds")
    add.add_argument("--trust", action="store_true", help="run this server's tools without asking")
    remove = commands.add_parser("remove", help="remove a server from settings")
    remove.add_argument("name")
    login = commands.add_parser("login", help="sign in to a remote server that asks for OAuth")
    login.add_argument("name")
    logout = commands.add_parser("logout", help="forget the sign-in to a server")
    logout.add_argument("name")
    for sub in (add, remove):
        sub.add_argument("-s", "--scope", choices=("project", "user"), default="project")
    return parser


_HELD_SERVER = re.compile(r"MCP server '([^']*)'")
"""How a held-back MCP server's line begins (``MCP server 'name': command``)."""


@dataclass(frozen=True)
class HeldServers:
    """The project's MCP servers that do not start because its folder is not trusted."""

    reason: str
    folder: str
    servers: tuple[str, ...]

    def lines(self) -> list[str]:
        return [
            f"Held back, because this folder is not trusted ({self.reason}):",
            *(f"  {server}" for server in self.servers),
            f'To trust it: start qcli here and answer its question with t, or add "{self.folder}": '
            '"TRUST_FOLDER" to ~/.qwen/trustedFolders.json.',
        ]


def held_back_servers(cwd: Path, shown: frozenset[str] = frozenset()) -> HeldServers | None:
    """What of the project's MCP servers is held back (leaving out ``shown``, servers running anyway)."""
    from qcore.settings import load_settings

    loaded = load_settings(cwd)
    held = []
    for item in map(str, loaded.held_back):
        match = _HELD_SERVER.match(item)
        if match is not None and match.group(1) not in shown:
            held.append(item)
    if not held or loaded.trust is None:
        return None
    return HeldServers(loaded.trust.reason, str(loaded.trust.folder), tuple(held))


def settings_file(scope: str, cwd: Path) -> Path:
    return (Path.home() if scope == "user" else cwd) / ".qwen" / "settings.json"


_VALUED = {"--url", "--http-url", "-e", "--env", "-H", "--header", "--timeout", "-s", "--scope"}


def _split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """For ``add``: the options and NAME, and the server's command line after them (everything from the
    first word after NAME, or after ``--``), so the server's own flags (``npx -y ...``) stay its own."""
    if argv[:1] != ["add"]:
        return argv, []
    seen_name = False
    at = 1
    while at < len(argv):
        word = argv[at]
        if word == "--":
            return argv[:at], argv[at + 1 :]
        if word.startswith("-"):
            at += 2 if word in _VALUED else 1
            continue
        if seen_name:
            return argv[:at], argv[at:]
        seen_name = True
        at += 1
    return argv, []


def run_mcp(argv: list[str], cwd: Path | None = None) -> int:
    parser = build_parser()
    options, command_line = _split_command(argv)
    args = parser.parse_args(options)
    if args.command == "add" and command_line:
        args.command_line = command_line
    cwd = cwd or Path.cwd()
    try:
        if args.command == "list":
            return asyncio.run(_list(cwd))
        if args.command == "add":
            return _add(parser, args, cwd)
        if args.command in ("login", "logout"):
            from qcli import mcp_login

            return (
                asyncio.run(mcp_login.login(args.name, cwd))
                if args.command == "login"
                else mcp_login.logout(args.name)
            )
        return _remove(args, cwd)
    except (OSError, ValueError, RuntimeError) as error:
        sys.stderr.write(f"qcli mcp: {error}\n")
        return EXIT_ERROR


def _entry(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    given = [bool(args.command_line), bool(args.url), bool(args.http_url)]
    if sum(given) != 1:
        parser.error("give exactly one of: a command (with its arguments), --url or --http-url")
    entry: dict[str, Any]
    if args.command_line:
        words = args.command_line
        entry = {"command": words[0], **({"args": words[1:]} if words[1:] else {})}
    elif args.url:
        entry = {"url": args.url}
    else:
        entry = {"httpUrl": args.http_url}
    env = {}
    for pair in args.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            parser.error(f"--env takes KEY=VALUE, not {pair!r}")
        env[key] = value
    if env:
        entry["env"] = env
    headers = {}
    for header in args.header:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            parser.error(f"--header takes 'Name: value', not {header!r}")
        headers[name.strip()] = value.strip()
    if headers:
        entry["headers"] = headers
    if args.timeout is not None:
        entry["timeout"] = args.timeout
    if args.trust:
        entry["trust"] = True
    return entry


def _add(parser: argparse.ArgumentParser, args: argparse.Namespace, cwd: Path) -> int:
    from qcore.settings.object_writer import set_member

    entry = _entry(parser, args)
    path = settings_file(args.scope, cwd)
    replaced = set_member(path, ("mcpServers", args.name), entry)
    print(f"{'Updated' if replaced else 'Added'} MCP server '{args.name}' in {path} ({args.scope} scope).")
    return EXIT_OK


def _remove(args: argparse.Namespace, cwd: Path) -> int:
    from qcore.settings.object_writer import remove_member

    path = settings_file(args.scope, cwd)
    if not remove_member(path, ("mcpServers", args.name)):
        sys.stderr.write(f"qcli mcp: no server '{args.name}' in {path} ({args.scope} scope)\n")
        return EXIT_ERROR
    print(f"Removed MCP server '{args.name}' from {path}.")
    return EXIT_OK


async def _list(cwd: Path) -> int:
    from qcore.discovery.mcp import McpManager
    from qcore.settings import load_settings

    loaded = load_settings(cwd)
    for problem in loaded.problems:
        sys.stderr.write(f"qcli mcp: settings: {visible(str(problem))}\n")
    for item in loaded.held_back:
        if not _HELD_SERVER.match(str(item)):
            sys.stderr.write(f"qcli mcp: held back (folder not trusted): {visible(str(item))}\n")
    manager = McpManager.from_settings(loaded.settings, cwd)
    async with manager:
        statuses = await manager.wait_ready()
    held = held_back_servers(cwd, frozenset(status.name for status in statuses))
    if held is not None:
        print(visible("\n".join(held.lines())))
    if not statuses:
        if held is None:
            print("No MCP servers configured.")
        return EXIT_OK
    for status in statuses:
        where = status.command or status.url or ""
        if status.state == "connected":
            counts = f"{status.tool_count} tool{'s' if status.tool_count != 1 else ''}"
            if status.prompt_count:
                counts += f", {status.prompt_count} prompts"
            print(visible(f"{status.name}: connected ({counts}) - {where}"))
        else:
            print(visible(f"{status.name}: {status.state}: {status.reason or 'no reason given'} - {where}"))
    return EXIT_OK if all(s.state in ("connected", "disabled") for s in statuses) else EXIT_ERROR
