"""``qcli --demo``: the whole loop with no API key, on a scratch copy of a sample project.

The scripted model reads ``greet.py``, proposes one edit (which you approve or refuse like any other),
runs the module to check it (a command you approve or refuse too), and answers according to what
happened. The user's own files are never touched, and the scratch copy is removed when qcli exits.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from importlib.resources import as_file, files
from pathlib import Path

from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.types import ChatMessage, ModelResponse

DEMO_PROMPT = "Make greet() end the greeting with an exclamation mark."
OLD_LINE = '    return "Hello, " + name'
NEW_LINE = '    return "Hello, " + name + "!"'


def copy_sample_project() -> Path:
    target = Path(tempfile.mkdtemp(prefix="qcli-demo-"))
    with as_file(files("qcli").joinpath("demo_project")) as source:
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _failed(message: ChatMessage) -> bool:
    return str(message.content or "").startswith(("Error", "[Operation Cancelled]"))


def _after_edit(messages: Sequence[ChatMessage]) -> ModelResponse:
    last = messages[-1]
    if _failed(last):
        return reply(
            f"The edit was not applied, so `greet.py` is unchanged. The tool said:\n\n> {last.content}"
        )
    return reply(
        "The edit is in place. Let me run the module to check the greeting:",
        (
            "run_shell_command",
            {"command": "python3 greet.py", "description": "Run greet.py to see the greeting"},
        ),
    )


def _closing(messages: Sequence[ChatMessage]) -> ModelResponse:
    last = messages[-1]
    if _failed(last):
        return reply(
            "I changed `greet.py` but did not run it, since the command was not allowed. "
            "You can check it yourself with `python3 greet.py`."
        )
    return reply(
        "## Done\n\n`greet()` now ends the greeting with an exclamation mark. Running the module printed:\n\n"
        "```text\nHello, world!\n```\n\n"
        '- **edited** `greet.py`: one line, `+ "!"` at the end of the return\n'
        "- **checked** it with `python3 greet.py`\n"
    )


def demo_model(root: Path) -> ScriptedLLM:
    path = str(root / "greet.py")
    return ScriptedLLM(
        [
            reply(
                "I'll read `greet.py` first.",
                ("read_file", {"absolute_path": path}),
                reasoning="The user wants the greeting to end with '!'. The code is in greet.py; read it first.",
            ),
            reply(
                "`greet()` builds the text with `+`; I'll add the exclamation mark there.",
                ("edit", {"file_path": path, "old_string": OLD_LINE, "new_string": NEW_LINE}),
            ),
            _after_edit,
            _closing,
        ],
        model="demo (scripted)",
        delay=0.01,
    )
