"""What a call touches, as the permission rules see it: a shell command, paths, a URL, an MCP server.

A tool returns a ``Subject`` from ``permission_subject``; the policy asks it whether a rule's specifier
(``edit(src/**)``, ``run_shell_command(git status)``, ``web_fetch(domain:example.org)``) reaches the call,
whether allow rules cover all of it, and which rule an "always" answer should add. The policy never
switches on the subject's type, so a new tool brings its own kind of rule by bringing its own subject.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit

from qcore.permissions.rules import command_matches, path_matches, url_matches

if TYPE_CHECKING:
    from qcore.shell.analysis import ShellAnalysis, SimpleCommand

__all__ = ["PathSubject", "ServerSubject", "ShellSubject", "Subject", "UrlSubject"]


@runtime_checkable
class Subject(Protocol):
    def matches(self, specifier: str, root: Path) -> bool:
        """Whether a deny or ask rule with this specifier reaches any part of the call."""
        ...

    def allowed_by(self, specifiers: Sequence[str | None], root: Path) -> bool:
        """Whether allow rules with these specifiers (None: the bare tool name) cover all of the call."""
        ...

    def suggest(self, tool_name: str, *, server_wide: bool = False) -> list[str]:
        """The allow rules an "always" answer would add; empty when no narrow rule can cover the call."""
        ...

    def uncoverable(self) -> str | None:
        """Why no allow rule at all can cover the call (None: one can), for the user to read."""
        ...

    def reads_only(self) -> bool:
        """Whether the call is proven to only read, so that it may run unasked in every mode."""
        ...


@dataclass(frozen=True)
class ShellSubject:
    """A command line; rules cover simple commands, so the line is judged command by command."""

    command: str
    confined: bool = False
    """A sandbox confines what runs unasked; without one only plain read-only lines may."""

    def reads_only(self) -> bool:
        from qcore.shell.readonly import is_read_only

        return is_read_only(self.analysis, confined=self.confined)

    @cached_property
    def analysis(self) -> ShellAnalysis:
        from qcore.shell.analysis import analyse

        return analyse(self.command)

    def matches(self, specifier: str, root: Path) -> bool:
        return any(command_matches(specifier, command) for command in self.analysis.commands)

    def allowed_by(self, specifiers: Sequence[str | None], root: Path) -> bool:
        return self._covered(specifiers)

    def _covered(self, specifiers: Sequence[str | None]) -> bool:
        """Every command read-only or covered by a rule, nothing written, and all of the line understood."""
        analysis = self.analysis
        if not analysis.understood or analysis.writes:
            return False
        return all(
            self.command_allowed(command, specifiers)
            for command in analysis.commands
            if not command.transparent
        )

    @staticmethod
    def command_allowed(command: SimpleCommand, specifiers: Sequence[str | None]) -> bool:
        from qcore.shell.readonly import is_read_only_command

        if is_read_only_command(command):
            return True
        return any(spec is None or command_matches(spec, command) for spec in specifiers)

    def uncoverable(self) -> str | None:
        analysis = self.analysis
        if not analysis.understood:
            return "part of the command line cannot be known before it runs, and rules only cover what can"
        if analysis.writes:
            written = ", ".join(analysis.writes)
            return f"it writes to a file ({written}), and a rule never allows writing through the shell"
        for command in self._needing_rules():
            if not command.static or not command.literal_name:
                return (
                    f"in {command.text!r} a word is computed when it runs, and rules only cover fixed words"
                )
            if command.assignments:
                return (
                    f"{command.text!r} sets variables for the command it runs, and rules only cover commands "
                    "without them"
                )
        if not self._covered(self._narrow_specifiers()):
            return "the rules a question could save would not cover all of it"
        return None

    def suggest(self, tool_name: str, *, server_wide: bool = False) -> list[str]:
        """One prefix rule per command that still asks: its name, and its subcommand when it has one;
        empty unless those rules would let the whole line run (a suggestion that still asks is a lie)."""
        if self.uncoverable() is not None:
            return []
        return [f"{tool_name}({specifier})" for specifier in self._narrow_specifiers()]

    def choices(self, tool_name: str, root: Path) -> list[list[str]]:
        """The rules "always" could save, narrowest first: each command exactly as written, then by its
        subcommand, then by its name; only sets that let the whole line run, each once."""
        if self.uncoverable() is not None:
            return []
        found: list[list[str]] = []
        for width in (0, 1, 2):
            specifiers = self._narrow_specifiers(width)
            rules = [f"{tool_name}({specifier})" for specifier in specifiers]
            if rules and rules not in found and self.allowed_by(specifiers, root):
                found.append(rules)
        return found

    def _needing_rules(self) -> list[SimpleCommand]:
        return [
            command
            for command in self.analysis.commands
            if not command.transparent and not self.command_allowed(command, ())
        ]

    def _narrow_specifiers(self, width: int = 1) -> list[str]:
        """Per command that still asks: with ``width`` 0 the command exactly (where a rule can say it
        exactly), 1 its name and subcommand, 2 its name alone. Only asked once every command needing a
        rule is known to have fixed words (``uncoverable``)."""
        specifiers: list[str] = []
        for command in self._needing_rules():
            specifier = ""
            if width == 0:
                exact = shlex.join(command.argv)
                if command_matches(exact, command):
                    specifier = exact
            if not specifier and width <= 1:
                words = (
                    command.argv[:2]
                    if len(command.argv) > 1 and _subcommand(command.argv[1])
                    else command.argv[:1]
                )
                specifier = f"{shlex.join(words)}:*"
            if not specifier:
                specifier = f"{shlex.quote(command.argv[0])}:*"
            if specifier not in specifiers:
                specifiers.append(specifier)
        return specifiers


def _subcommand(word: str) -> bool:
    return word.isascii() and word.replace("-", "").replace("_", "").isalnum() and not word.startswith("-")


@dataclass(frozen=True)
class PathSubject:
    paths: tuple[Path, ...]
    """Real (symlink-free) absolute paths."""

    def matches(self, specifier: str, root: Path) -> bool:
        return any(path_matches(specifier, path, root) for path in self.paths)

    def allowed_by(self, specifiers: Sequence[str | None], root: Path) -> bool:
        if None in specifiers:
            return True
        return bool(self.paths) and all(
            any(spec is not None and path_matches(spec, path, root) for spec in specifiers)
            for path in self.paths
        )

    def suggest(self, tool_name: str, *, server_wide: bool = False) -> list[str]:
        return [tool_name]

    def choices(self, tool_name: str, root: Path) -> list[list[str]]:
        """The files themselves, then their folders (with all below), then every file."""
        found: list[list[str]] = []
        for specifiers in (
            [_path_spec(path, root) for path in self.paths],
            [_path_spec(path.parent, root) + "/**" for path in self.paths],
        ):
            unique = list(dict.fromkeys(specifiers))
            rules = [f"{tool_name}({specifier})" for specifier in unique]
            if self.paths and rules not in found and self.allowed_by(unique, root):
                found.append(rules)
        found.append([tool_name])
        return found

    def uncoverable(self) -> str | None:
        return None

    def reads_only(self) -> bool:
        return False


def _path_spec(path: Path, root: Path) -> str:
    """A path as a rule names it: relative to the workspace root inside it, absolute outside; glob
    characters escaped, so the rule means this path only."""
    text = str(path.relative_to(root)) if path.is_relative_to(root) and path != root else str(path)
    for char in "\\[]*?!#":
        text = text.replace(char, "\\" + char)
    return text


@dataclass(frozen=True)
class UrlSubject:
    url: str

    def matches(self, specifier: str, root: Path) -> bool:
        return url_matches(specifier, self.url)

    def allowed_by(self, specifiers: Sequence[str | None], root: Path) -> bool:
        return any(spec is None or url_matches(spec, self.url) for spec in specifiers)

    def suggest(self, tool_name: str, *, server_wide: bool = False) -> list[str]:
        host = urlsplit(self.url).hostname
        return [f"{tool_name}(domain:{host})"] if host else [tool_name]

    def uncoverable(self) -> str | None:
        return None

    def reads_only(self) -> bool:
        return False


@dataclass(frozen=True)
class ServerSubject:
    """A tool of an MCP server: rules name the tool (``mcp__github__create_issue``) or, with a glob, the
    whole server (``mcp__github__*``); there is nothing finer to match."""

    server: str
    tool_prefix: str
    """``mcp__<server as spelt in tool names>__``."""

    def matches(self, specifier: str, root: Path) -> bool:
        return False

    def allowed_by(self, specifiers: Sequence[str | None], root: Path) -> bool:
        return None in specifiers

    def suggest(self, tool_name: str, *, server_wide: bool = False) -> list[str]:
        return [f"{self.tool_prefix}*"] if server_wide else [tool_name]

    def uncoverable(self) -> str | None:
        return None

    def reads_only(self) -> bool:
        return False
