"""One answer from the model: its reasoning, collapsed, then its text, streamed as Markdown.

Both parts are created on their first fragment, so an answer with no reasoning has no empty block, and
a reply that is only tool calls adds nothing to the conversation. Fragments are made ``visible`` as they
come in, so neither part (nor the transcript, which takes the text from here) holds a control sequence.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Vertical

from qcli.terminal_text import visible
from qcli.tui.widgets.markdown_stream import StreamingMarkdown
from qcli.tui.widgets.reasoning_block import ReasoningBlock


class AssistantTurn(Vertical):
    DEFAULT_CSS = """
    AssistantTurn { height: auto; margin: 0 0 1 0; }
    AssistantTurn > ReasoningBlock { margin: 0; }
    """

    def __init__(self) -> None:
        super().__init__(classes="assistant")
        self._reasoning: ReasoningBlock | None = None
        self._markdown: StreamingMarkdown | None = None
        self.finished = False
        """Set by ``finish``: the answer is whole (the conversation may then draw it as lines)."""

    @property
    def text(self) -> str:
        return self._markdown.source if self._markdown is not None else ""

    @property
    def reasoning(self) -> str:
        return self._reasoning.text if self._reasoning is not None else ""

    def write(self, fragment: str) -> None:
        if self._markdown is None:
            if self._reasoning is not None:
                self._reasoning.finish()  # the answer began: the thinking is over
            self._markdown = StreamingMarkdown()
            self.mount(self._markdown)
        self._markdown.write(visible(fragment))

    def write_reasoning(self, fragment: str) -> None:
        if self._reasoning is None:
            self._reasoning = ReasoningBlock()
            self.mount(self._reasoning, before=0 if self.children else None)
        self._reasoning.write(visible(fragment))

    def frozen(self) -> RenderableType:
        """The answer as Rich draws its Markdown (the reasoning, collapsed on screen, as one line)."""
        from rich.markdown import Markdown

        parts: list[RenderableType] = []
        if self._reasoning is not None:
            parts.append(Text(f"▶ {self._reasoning.title}", "dim italic"))
        if self.text:
            parts.append(Markdown(self.text))
        return Group(*parts)

    def finish(self) -> None:
        self.finished = True
        if self._reasoning is not None:
            self._reasoning.finish()
        if self._markdown is not None and not self._markdown.is_finished:
            self._markdown.finish()
