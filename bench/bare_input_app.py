"""The peer for the launch benchmark: a bare Textual app with one Input, nothing else."""

from textual.app import App, ComposeResult
from textual.widgets import Input


class Bare(App[None]):
    def compose(self) -> ComposeResult:
        yield Input(placeholder="Ask anything")


if __name__ == "__main__":
    Bare().run()
