"""``qcli --demo``: the whole loop with no API key, on a scratch copy of a sample project.

The scripted model reads ``greet.py``, proposes one edit (which you approve or refuse like any other),
and answers according to what happened. The user's own files are never touched.
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


def _closing(messages: Sequence[ChatMessage]) -> ModelResponse:
    last = str(messages[-1].content or "")
    if last.startswith(("Error", "[Operation Cancelled]")):
        return reply(f"The edit was not applied, so greet.py is unchanged. The tool said:\n{last}")
    return reply(
        "Done: greet() now ends the greeting with an exclamation mark, so greet('world') returns 'Hello, world!'."
    )


def demo_model(root: Path) -> ScriptedLLM:
    path = str(root / "greet.py")
    return ScriptedLLM(
        [
            reply("I'll read greet.py first.", ("read_file", {"absolute_path": path})),
            reply(
                "greet() builds the text with +; I'll add the exclamation mark there.",
                ("edit", {"file_path": path, "old_string": OLD_LINE, "new_string": NEW_LINE}),
            ),
            _closing,
        ],
        model="demo (scripted)",
        delay=0.01,
    )
