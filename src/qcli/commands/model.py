"""``/model``: the model in use and the ones to switch to (``modelProviders`` and the server's list);
``/model NAME`` switches from the next request on, the conversation kept."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost
    from qcore.agent.models import ModelChoice
    from qcore.llm.types import LLMClient
    from qcore.settings import Settings

__all__ = ["model"]


async def model(host: CommandHost, args: str) -> None:
    from qcore.agent.models import ModelChoice, configured_choices, server_choices, switch_model

    session = host.session
    settings = session.config.settings if session.config is not None else None
    choices = configured_choices(settings) if settings is not None else []
    listed = {choice.id for choice in choices}
    choices += [c for c in await server_choices(session.llm) if c.id not in listed]
    wanted = args.strip()
    if not wanted:
        host.show(_listing(session.llm.model, choices))
        return
    choice = next((c for c in choices if c.id == wanted), ModelChoice(wanted, source="named"))
    if choice.env_key and not os.environ.get(choice.env_key):
        host.notice(f"{choice.id} needs its key in ${choice.env_key}, which is not set.", Severity.ERROR)
        return
    window = switch_model(session, choice, _client_maker(session.llm, settings))
    unlisted = " (not listed by the settings or the server)" if choice.source == "named" and choices else ""
    host.notice(f"Model: {choice.id}{unlisted}, with a window of {window:,} tokens.", Severity.SUCCESS)


def _listing(current: str, choices: list[ModelChoice]) -> str:
    rows = [f"- **{current}** (in use)"]
    for choice in choices:
        if choice.id != current:
            where = f" at {choice.base_url}" if choice.base_url else ""
            about = f": {choice.description}" if choice.description else ""
            rows.append(f"- `{choice.id}`{about}{where} ({choice.source})")
    if len(rows) == 1:
        rows.append("- no others listed: add `modelProviders` to settings.json, or name one: `/model NAME`")
    return "### Models\n\n" + "\n".join(rows) + "\n\n`/model NAME` switches from the next request on."


def _client_maker(
    current: LLMClient, settings: Settings | None
) -> Callable[[ModelChoice, str | None], LLMClient] | None:
    """Makes a client for a model on another endpoint, configured as the session's own is."""
    from qcli.launch import openai_client
    from qcore.llm.openai import OpenAIClient

    if not isinstance(current, OpenAIClient) or settings is None:
        return None

    def make(choice: ModelChoice, key: str | None) -> LLMClient:
        return openai_client(settings, choice.id, key, choice.base_url, choice.generation)[0]

    return make
