"""What a message is made of besides plain text: the parts the model reads (text, and media it can see),
shared by the messages sent to the model and the results tools hand back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["InlineDataPart", "Part", "TextPart", "part_from_json"]


@dataclass(frozen=True)
class TextPart:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class InlineDataPart:
    """Media the model can see (an image, a PDF page), base64-encoded."""

    mime_type: str
    data: str
    display_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        record = {"type": "inline", "mime_type": self.mime_type, "data": self.data}
        if self.display_name is not None:
            record["display_name"] = self.display_name
        return record


Part = TextPart | InlineDataPart


def part_from_json(record: Any) -> Part:
    """A part from its ``to_json`` form; ``ValueError`` names what is wrong (the file is not ours to trust)."""
    kind = record.get("type") if isinstance(record, dict) else None
    if kind == "text" and isinstance(record.get("text"), str):
        return TextPart(record["text"])
    if kind == "inline" and isinstance(record.get("mime_type"), str) and isinstance(record.get("data"), str):
        name = record.get("display_name")
        return InlineDataPart(record["mime_type"], record["data"], name if isinstance(name, str) else None)
    raise ValueError(f"not a message part: {str(record)[:80]}")
