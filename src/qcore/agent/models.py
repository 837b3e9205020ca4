"""Switching the session's model (``/model``), and the models there are to switch to.

The names come from Qwen Code's ``modelProviders`` settings (entries of the OpenAI-compatible providers:
``id``, ``name``, ``description``, and where the model lives elsewhere, ``baseUrl`` with ``envKey``, the
variable that holds its key) and from the server's own ``/v1/models``. A switch takes effect from the next
request; the history stays. The context window follows the model: the user's ``contextWindowSize`` when
set, else what the server says for the new model, else the family table. An entry on another endpoint gets
a client of its own, made by the front end's ``make_client`` (which knows the generation settings).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from qcore.events import ModelChanged
from qcore.settings.model import ModelProvider, Settings

if TYPE_CHECKING:
    from qcore.agent.session import Session
    from qcore.llm.types import LLMClient

NOT_SPOKEN = frozenset({"anthropic", "gemini", "vertex-ai", "qwen-oauth"})
"""Providers whose entries speak another API than OpenAI's; every other provider id (``openai``, one's
own) is taken as OpenAI-compatible."""


@dataclass(frozen=True)
class ModelChoice:
    id: str
    description: str = ""
    base_url: str | None = None
    env_key: str | None = None
    generation: Mapping[str, Any] | None = None
    """The entry's own ``generationConfig`` (over the session's)."""
    source: str = "settings"
    """``settings``, ``server`` (listed by ``/v1/models``) or ``named`` (by the user, listed nowhere)."""


def configured_choices(settings: Settings) -> list[ModelChoice]:
    """The models ``modelProviders`` offers, in the order written; malformed entries skipped."""
    found: list[ModelChoice] = []
    for provider, entries in settings.model_providers.items():
        if provider in NOT_SPOKEN or not isinstance(entries, list):
            continue
        for entry in entries:
            try:
                model = ModelProvider.model_validate(entry)
            except ValidationError:
                continue
            about = model.description or model.name or ""
            found.append(ModelChoice(model.id, about, model.base_url, model.env_key, model.generation_config))
    return found


async def server_choices(llm: LLMClient) -> list[ModelChoice]:
    """The models the server lists (none when it lists none, or cannot be asked)."""
    ask = getattr(llm, "list_models", None)
    if ask is None:
        return []
    try:
        names: list[str] = await ask()
    except Exception:  # a server without the endpoint offers nothing to pick
        return []
    return [ModelChoice(name, source="server") for name in names]


def switch_model(
    session: Session,
    choice: ModelChoice,
    make_client: Callable[[ModelChoice, str | None], LLMClient] | None = None,
) -> int:
    """Use ``choice`` from the next request on; returns the context window now assumed (the server is
    asked for the real one in the background)."""
    llm = session.llm
    elsewhere = choice.base_url is not None and choice.base_url.rstrip("/") != getattr(llm, "base_url", None)
    if elsewhere and make_client is not None:
        key = os.environ.get(choice.env_key) if choice.env_key else None
        session.use_llm(make_client(choice, key))
    else:
        llm.model = choice.id
    window = session.context.model_changed(choice.id)
    session.events.emit(ModelChanged(choice.id, window))
    return window
