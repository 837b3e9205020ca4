"""One answer from the model: its reasoning (collapsed) and its text, streamed as Markdown."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AssistantTurn(Vertical):
    DEFAULT_CSS = """
    AssistantTurn { height: auto; margin: 0 0 1 0; }
    AssistantTurn > Collapsible { margin: 0; padding: 0; border: none; }
    """

    def __init__(self) -> None:
        super().__init__(classes="assistant")
        self.text = ""
        self.reasoning = ""
        self._markdown = Markdown()
        self._stream: MarkdownStream | None = None

    def compose(self) -> ComposeResult:
        yield self._markdown

    def write(self, fragment: str) -> None:
        self.text += fragment
        if self._stream is None:
            self._stream = Markdown.get_stream(self._markdown)
        stream = self._stream
        self.call_later(stream.write, fragment)

    def write_reasoning(self, fragment: str) -> None:
        self.reasoning += fragment

    def finish(self) -> None:
        if self._stream is not None:
            self.call_later(self._stream.stop)
