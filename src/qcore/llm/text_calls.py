"""Tool calls a model wrote as text, for servers that run no tool-call parser.

Without one (llama.cpp without ``--jinja``, Ollama with some templates, vLLM without
``--tool-call-parser``) the model's own call syntax arrives as the answer's text:

- Hermes / Qwen 2.5: ``<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>``;
- Qwen3-Coder: ``<tool_call><function=read_file><parameter=path>a.py</parameter></function></tool_call>``
  (the ``<tool_call>`` wrapper is sometimes left out).

They are read only where a model puts a call it means to make: at the very end of a message that holds
no structured call, outside any code fence, and only for tools that were declared; one that does not parse
whole leaves the text as it is. A model explaining the syntax, or quoting a call in a fence, is not calling.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Collection
from dataclasses import replace

from qcore.llm.types import ModelResponse, ToolCallRequest

_HERMES = re.compile(r"<tool_call>\s*(\{.*\})\s*</tool_call>", re.S)
_XML_CALL = re.compile(r"(?:<tool_call>\s*)?<function=([\w.:-]+)>(.*)</function>\s*(?:</tool_call>)?", re.S)
_PARAMETER = re.compile(r"<parameter=([\w.:-]+)>\n?(.*?)\n?</parameter>", re.S)
_ids = itertools.count(1)


def _outside_fences(text: str, position: int) -> bool:
    return text.count("```", 0, position) % 2 == 0


def _hermes(body: str, declared: Collection[str]) -> tuple[str, str] | None:
    try:
        record = json.loads(body)
    except ValueError:
        return None
    name, arguments = record.get("name"), record.get("arguments", record.get("parameters", {}))
    if not isinstance(name, str) or name not in declared:
        return None
    if isinstance(arguments, str):
        return name, arguments
    if not isinstance(arguments, dict):
        return None
    return name, json.dumps(arguments, ensure_ascii=False)


def _xml(name: str, body: str, declared: Collection[str]) -> tuple[str, str] | None:
    if name not in declared:
        return None
    parameters = {key: value for key, value in _PARAMETER.findall(body)}
    if _PARAMETER.sub("", body).strip():
        return None  # something besides parameters: not a call in this syntax
    return name, json.dumps(parameters, ensure_ascii=False)


def split_text_calls(text: str, declared: Collection[str]) -> tuple[str, list[tuple[str, str]]]:
    """The text before the calls at its end, and those calls as (name, arguments JSON)."""
    calls: list[tuple[str, str]] = []
    rest = text.rstrip()
    while rest:
        found = _last_call(rest, declared)
        if found is None:
            break
        start, call = found
        calls.insert(0, call)
        rest = rest[:start].rstrip()
    return (rest if calls else text), calls


def _last_call(text: str, declared: Collection[str]) -> tuple[int, tuple[str, str]] | None:
    """The call that ends ``text`` and where it starts, or None."""
    for start in sorted({text.rfind("<tool_call>"), text.rfind("<function=")}):
        if start < 0 or not _outside_fences(text, start):
            continue
        tail = text[start:]
        hermes = _HERMES.fullmatch(tail)
        if hermes is not None:
            call = _hermes(hermes.group(1), declared)
        elif (xml := _XML_CALL.fullmatch(tail)) is not None:
            call = _xml(xml.group(1), xml.group(2), declared)
        else:
            continue
        return (start, call) if call is not None else None
    return None


def with_text_calls(response: ModelResponse, declared: Collection[str]) -> ModelResponse:
    """``response`` with the calls written at the end of its text made into tool calls, when it has no
    structured ones."""
    if response.tool_calls or "<" not in response.text or not declared:
        return response
    rest, calls = split_text_calls(response.text, declared)
    if not calls:
        return response
    requests = tuple(ToolCallRequest(f"call_text_{next(_ids)}", name, arguments) for name, arguments in calls)
    return replace(response, text=rest, tool_calls=requests)
