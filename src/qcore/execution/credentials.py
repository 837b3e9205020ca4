"""The environment of what qcli starts for its tools: its own, less the credentials qcli signs in with.

A command the model runs (in the foreground or the background), the Python kernel, an MCP server started
over stdio and a discovered tool all inherit qcli's environment, and whatever they print can reach the
model. qcli's model and search keys are not theirs to read, so these variables are withheld:

- the ones the Qwen Code family reads model and search keys from (``CREDENTIAL_VARIABLES``:
  ``OPENAI_API_KEY``, ``DASHSCOPE_API_KEY``, ``TAVILY_API_KEY`` ...), whether or not this run uses them;
- any variable that holds a key qcli uses, wherever that key came from: ``security.auth.apiKey`` written
  as ``"${MY_KEY}"`` withholds ``MY_KEY``, and so does ``--openai-api-key "$MY_KEY"`` (``withhold``).

Other credentials of the user's (``GH_TOKEN``, ``AWS_*``, ``NPM_TOKEN``) stay: ``gh``, the AWS CLI and
``npm publish`` need them when the user approves such a command, and qcli does not sign in with them.
``tools.envPassthrough`` in settings names variables that are passed through all the same (a project
whose tests call the model), and an MCP server's own ``env`` in settings is given to it as written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qcore.settings import Settings

CREDENTIAL_VARIABLES = frozenset(
    {
        "OPENAI_API_KEY",
        "DASHSCOPE_API_KEY",
        "BAILIAN_CODING_PLAN_API_KEY",
        "QWEN_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENROUTER_API_KEY",
        "TAVILY_API_KEY",
        "QWEN_SERVER_TOKEN",
        "QWEN_DAEMON_TOKEN",
    }
)
"""Where the Qwen Code family reads model and web-search keys (and its daemons' tokens) from."""

MIN_SECRET_CHARS = 8
"""A key shorter than this (``EMPTY``, ``none``: what local servers accept) is matched by name only, so
an unrelated variable that happens to hold the same word is left alone."""

_in_use: set[str] = set()


def withhold(secret: str | None) -> None:
    """Record a key this process signs in with (the model client calls it), so any variable holding it
    is withheld from what tools start, whatever its name."""
    if secret and len(secret) >= MIN_SECRET_CHARS:
        _in_use.add(secret)


def _settings_secrets(settings: Settings) -> Iterable[str | None]:
    yield settings.security.auth.api_key
    for provider in settings.web_search.provider:
        yield provider.api_key


def withheld(settings: Settings | None = None, env: Mapping[str, str] | None = None) -> set[str]:
    """The names in ``env`` (default: this process's environment) that a tool's process does not get."""
    env = os.environ if env is None else env
    secrets = set(_in_use)
    if settings is not None:
        secrets.update(s for s in _settings_secrets(settings) if s and len(s) >= MIN_SECRET_CHARS)
    names = {name for name, value in env.items() if name in CREDENTIAL_VARIABLES or value in secrets}
    passed = set(settings.tools.env_passthrough) if settings is not None else set()
    return names - passed


def tool_environment(
    settings: Settings | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``base`` (default: this process's environment) without the withheld credentials."""
    env = dict(os.environ if base is None else base)
    for name in withheld(settings, env):
        del env[name]
    return env


def hide_own_environment() -> None:
    """Make qcli's own ``/proc/<pid>/environ`` (which keeps the keys it was started with, whatever
    ``os.environ`` says later) unreadable to the user's other processes, the commands qcli runs among
    them: a process that is not dumpable has its ``/proc`` files owned by root. Linux only; it also keeps
    debuggers of the same user from attaching. Children get their own dumpable flag back when they exec."""
    if os.uname().sysname != "Linux":
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return


PR_SET_DUMPABLE = 4
