"""Permission rules: ``tool`` or ``tool(specifier)``, in allow / ask / deny lists, each with its source.

Specifiers by what a call touches (its ``permission_subject``):

- shell commands: ``run_shell_command(git status)`` matches exactly that command; ``(npm test:*)`` or
  ``(npm test *)`` matches it with any further arguments. Matching is per simple command, so a rule never
  covers what follows ``&&`` or sits inside ``$(...)``.
- paths: ``edit(src/**)`` is a gitignore-style glob relative to the workspace root (``/abs/**`` and
  ``~/x/**`` are absolute), matched against real paths, so a symlink or ``..`` cannot step around it.
- URLs: ``web_fetch(domain:docs.python.org)`` matches that host and its subdomains;
  ``web_fetch(https://docs.python.org/3/*)`` is a wildcard pattern, matched against the URL as the server
  receives it (scheme and host in lower case, default port dropped, escapes and ``..`` resolved).
- tool names may be globs: ``mcp__github__*``.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pathspec

from qcore.shell.analysis import SimpleCommand


class RuleKind(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class RuleSource(StrEnum):
    FLAG = "flag"
    SESSION = "session"
    PROJECT = "project"
    USER = "user"
    SYSTEM = "system"


@dataclass(frozen=True)
class Rule:
    kind: RuleKind
    pattern: str
    """As written in settings, e.g. ``run_shell_command(npm test:*)``."""
    source: RuleSource
    path: Path | None = None
    """The settings file it came from, for project, user and system rules."""
    written: str | None = None
    """The entry as the file spells it, when that differs (legacy ``run_shell_command(git)`` is ``git:*``)."""

    tool: str = field(init=False, repr=False, compare=False)
    specifier: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A malformed rule never exists: RuleSyntaxError here, not at matching time.
        tool, specifier = split_rule(self.pattern)
        object.__setattr__(self, "tool", tool)
        object.__setattr__(self, "specifier", specifier)

    def describe(self) -> str:
        where = f" ({self.path})" if self.path else ""
        return f"{self.kind.value} {self.pattern} [{self.source.value}{where}]"


class RuleSyntaxError(ValueError):
    pass


def session_rules(patterns: Iterable[str]) -> list[Rule]:
    """The allow rules a session was given "for this session", back from their patterns (a resumed
    session's); a pattern no longer read as a rule is left out, and each rule comes once."""
    rules: list[Rule] = []
    for pattern in patterns:
        try:
            rule = Rule(RuleKind.ALLOW, pattern, RuleSource.SESSION)
        except ValueError:
            continue
        if rule not in rules:
            rules.append(rule)
    return rules


@lru_cache(maxsize=2048)
def split_rule(pattern: str) -> tuple[str, str | None]:
    """``edit(src/**)`` -> ``("edit", "src/**")``; ``read_file`` -> ``("read_file", None)``."""
    text = pattern.strip()
    if "(" not in text:
        if not text:
            raise RuleSyntaxError("a rule needs a tool name")
        return text, None
    if not text.endswith(")"):
        raise RuleSyntaxError(f"rule {pattern!r} opens '(' but does not end with ')'")
    tool, _, rest = text.partition("(")
    if not tool.strip():
        raise RuleSyntaxError(f"rule {pattern!r} has no tool name before '('")
    return tool.strip(), rest[:-1].strip()


@lru_cache(maxsize=4096)
def tool_matches(rule_tool: str, names: frozenset[str]) -> bool:
    """``names`` holds every spelling of the tool (lower case): name, display name, aliases."""
    wanted = rule_tool.strip().lstrip("_").lower()
    if any(char in wanted for char in "*?["):
        return any(fnmatch.fnmatchcase(name, wanted) for name in names)
    return wanted in names


# --- shell ------------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def shell_words(specifier: str) -> tuple[tuple[str, ...], bool]:
    """The words of a shell specifier and whether it is a prefix rule."""
    text = specifier.strip()
    prefix = False
    if text.endswith(":*"):
        text, prefix = text[:-2], True
    elif text.endswith(" *") or text == "*":
        text, prefix = text[:-1], True
    try:
        return tuple(shlex.split(text)), prefix
    except ValueError:
        return tuple(text.split()), prefix


def command_matches(specifier: str, command: SimpleCommand) -> bool:
    """Whether a shell rule covers one simple command.

    Only a command that is exactly what it says can match: a plain literal name (not computed, not a
    glob, not from a brace expansion), no assignments in front of it (``FOO=x cmd`` runs ``cmd`` with a
    changed environment), and literal words where the rule has words. Deny rules still see through
    such spellings: the analysis also lists the plain *view* of a command with assignments or
    brace-expanded words (``FOO=1 rm x`` as ``rm x``, ``r{m,} x`` as ``rm r x``), and a command name
    that cannot be known (``$CMD``, ``/bin/r[m]``) is a problem of the analysis, so the line is asked.
    """
    words, prefix = shell_words(specifier)
    argv = command.argv
    if not prefix:
        if argv != words:  # cheap checks first: most rules are about other commands
            return False
        return command.literal_prefix(len(argv)) and not command.open_ended and not command.assignments
    if len(argv) < len(words):
        return False
    head = (command.name, *argv[1 : len(words)]) if words and "/" not in words[0] else argv[: len(words)]
    if head != words:
        return False
    return command.literal_name and command.literal_prefix(len(words)) and not command.assignments


# --- paths and URLs ---------------------------------------------------------------------------------


def path_matches(specifier: str, path: Path, root: Path) -> bool:
    absolute, spec = _glob_spec(specifier)
    target = str(path)
    if absolute:
        return spec.match_file(target)  # pathspec reads "/x/y" as "x/y"
    base = os.path.join(root, "")  # ends with one slash, "/" included
    return target.startswith(base) and spec.match_file(target[len(base) :])


@lru_cache(maxsize=1024)
def _glob_spec(specifier: str) -> tuple[bool, pathspec.GitIgnoreSpec]:
    """Whether the glob is absolute (``/x/**``, ``~/x/**``), and the glob, built once per specifier."""
    pattern = os.path.expanduser(specifier.strip())
    return pattern.startswith("/"), pathspec.GitIgnoreSpec.from_lines([pattern.lstrip("/")])


def url_matches(specifier: str, url: str) -> bool:
    text = specifier.strip()
    if text.startswith("domain:"):
        domain = text[len("domain:") :].lower().strip(".")
        # "example.org." (fully qualified) is the same host as "example.org"; no host is no domain's
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
        return bool(host) and (host == domain or host.endswith("." + domain))
    # A URL pattern is matched against the URL as the server it names receives it, so a deny rule on
    # "https://evil.example/*" is not escaped by "HTTPS://EVIL.example.:443/" or a user part, and an
    # allow rule on ".../guide/*" does not let ".../guide/../private" through.
    return fnmatch.fnmatchcase(_canonical_url(url), _canonical_pattern(text))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _canonical_url(url: str) -> str:
    """``url`` as the server it reaches sees it: scheme and host in lower case, no trailing dot on the
    host, no user part, no default port, the path canonical (``_canonical_path``). A URL that does not
    parse, or names no host, is left as it is."""
    try:
        parts = urlsplit(url)
        host, port = (parts.hostname or "").rstrip("."), parts.port
    except ValueError:
        return url
    if not parts.scheme or not host:
        return url
    scheme = parts.scheme.lower()
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, _canonical_path(parts.path), parts.query, parts.fragment))


_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")


def _canonical_path(path: str) -> str:
    """A URL path as RFC 3986 compares it (section 6.2.2): an escaped unreserved character decoded
    (``%61dmin`` is ``admin``), other escapes in upper case, then ``.`` and ``..`` segments resolved
    (``/docs/../admin`` is ``/admin``), as the client and the server both do."""

    def unescape(match: re.Match[str]) -> str:
        character = chr(int(match.group(1), 16))
        return character if character in _UNRESERVED else f"%{match.group(1).upper()}"

    segments: list[str] = []
    parts = _ESCAPE.sub(unescape, path).split("/")
    for index, segment in enumerate(parts):
        last = index == len(parts) - 1
        if segment == "..":
            if len(segments) > 1:
                segments.pop()
            if last:
                segments.append("")
        elif segment == ".":
            if last:
                segments.append("")
        else:
            segments.append(segment)
    return "/".join(segments)


def _canonical_pattern(pattern: str) -> str:
    """A URL pattern's scheme and host in lower case and without a trailing dot, its default port
    dropped, its path canonical; wildcards are kept as they are."""
    scheme, sep, rest = pattern.partition("://")
    if not sep:
        return pattern
    netloc, slash, tail = rest.partition("/")
    host, colon, port = netloc.rpartition(":") if not netloc.endswith("]") else (netloc, "", "")
    if not colon or not port.isdigit():
        host, port = netloc, ""
    host = host.lower().rstrip(".")
    if port and int(port) != _DEFAULT_PORTS.get(scheme.lower()):
        host += f":{port}"
    path, mark, rest = tail.partition("?")
    return f"{scheme.lower()}://{host}{_canonical_path(slash + path)}{mark}{rest}"
