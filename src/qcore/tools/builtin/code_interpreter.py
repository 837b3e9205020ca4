"""``code_interpreter``: run Python in the session's Jupyter kernel, which keeps its state between calls.

The kernel itself (start, interrupt, death, restart, shutdown) is ``qcore.execution.kernel``; this module turns a
call into a cell and the cell's outputs into what the model reads and the user sees: streams and text
as they come, HTML as Markdown, images saved under the project's temp folder and handed to the model as
image parts, errors with their traceback (colour codes stripped). The call is asked about like a shell
command, under its own rule name (``code_interpreter``, ``CodeInterpreter``); plan mode refuses it.
"""

from __future__ import annotations

import base64
import itertools
import re
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.execution.credentials import tool_environment
from qcore.execution.kernel import Execution, Kernel, KernelOutput, KernelStartError
from qcore.files.storage import project_temp_dir
from qcore.llm.parts import InlineDataPart, Part, TextPart
from qcore.settings.model import CodeInterpreterSettings
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.builtin.shell import UPDATE_INTERVAL_SECONDS, _Throttle, strip_ansi
from qcore.tools.confirmation import CodeConfirmation
from qcore.tools.results import ImageDisplay, ToolErrorType, ToolResult, ToolResultDisplay

DEFAULT_TIMEOUT_MS = 120_000
IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg"}
_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)\n?[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_OPEN_FENCE = re.compile(r"\A\s*```[^\n`]*\n")


class CodeInterpreterParams(ToolParams):
    code: str = Field(
        description="Python code to run as one cell (plain code; a Markdown fence is unwrapped)."
    )


def unwrap_code(code: str) -> str:
    """The code inside Markdown fences when there is nothing but fences; an unclosed opening fence is
    dropped too. Anything else is the code as sent."""
    blocks = _FENCE.findall(code)
    if blocks and not _FENCE.sub("", code).strip():
        return "\n".join(blocks)
    if not blocks and _OPEN_FENCE.match(code):
        return _OPEN_FENCE.sub("", code, count=1)
    return code


def html_to_markdown(html: str) -> str:
    from markdownify import markdownify

    text = markdownify(html, heading_style="ATX", strip=["script", "style"])
    return re.sub(r"\n{3,}", "\n\n", text).strip()


class CodeInterpreter(BaseTool[CodeInterpreterParams]):
    """Runs Python code in a stateful Jupyter kernel (IPython) whose working directory is the workspace
    root. Variables, imports and definitions persist between calls, so build on earlier results instead
    of recomputing them. Returns stdout, stderr, the value of the last expression, rich displays (HTML
    as Markdown, images such as matplotlib figures, which you also see) and errors with their traceback.
    input() is not available. A cell that runs longer than the time limit (two minutes unless configured)
    is interrupted; its variables are kept. Use it for calculations, data analysis and plots; use the
    shell tool for commands."""

    name = "code_interpreter"
    kind = Kind.EXECUTE
    params_model = CodeInterpreterParams
    is_output_markdown = False
    can_update_output = True

    def __init__(self, context: ToolContext | None = None, kernel: Kernel | None = None) -> None:
        super().__init__(context)
        self._kernel = kernel or (context.kernel if context is not None else None)
        self._images = itertools.count(1)

    @property
    def kernel(self) -> Kernel:
        """The session's kernel (made from the settings on first use; nothing starts until a call)."""
        if self._kernel is None:
            settings = self._settings()
            self._kernel = Kernel(
                self.workspace.root,
                python=settings.python,
                kernel_spec=settings.kernel_spec,
                log_dir=self._temp_dir(),
                env=tool_environment(self.context.settings if self.context is not None else None),
            )
        return self._kernel

    def _settings(self) -> CodeInterpreterSettings:
        settings = self.context.settings if self.context is not None else None
        return settings.tools.code_interpreter if settings is not None else CodeInterpreterSettings()

    def _temp_dir(self) -> Path:
        workspace = self.workspace
        return (workspace.temp_dir or project_temp_dir(workspace.root)) / "kernel"

    def warm(self) -> None:
        if self.context is not None and self._settings().warm:
            self.kernel.warm()

    async def aclose(self) -> None:
        """End the kernel (and whatever its code left running)."""
        if self._kernel is not None:
            await self._kernel.shutdown()

    # --- before running ---------------------------------------------------------------------------

    def validate_tool_param_values(self, params: CodeInterpreterParams) -> str | None:
        if not unwrap_code(params.code).strip():
            return "The code is empty. Pass the Python code to run."
        return None

    def get_description(self, params: CodeInterpreterParams) -> str:
        return unwrap_code(params.code).strip()

    async def should_confirm_execute(
        self, params: CodeInterpreterParams, signal: AbortSignal
    ) -> CodeConfirmation:
        return CodeConfirmation(
            title="Confirm Python Code",
            code=unwrap_code(params.code),
            directory=str(self.workspace.root),
        )

    # --- running ----------------------------------------------------------------------------------

    async def execute(
        self, params: CodeInterpreterParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        timeout_ms = self._settings().timeout_ms
        rendered = _Rendered(self)

        def emit() -> None:
            if update_output is not None:
                update_output(rendered.text())

        throttle = _Throttle(emit, UPDATE_INTERVAL_SECONDS)

        def on_output(output: KernelOutput) -> None:
            rendered.add(output)
            throttle.poke()

        try:
            run = await self.kernel.execute(
                unwrap_code(params.code), on_output=on_output, time_limit=timeout_ms / 1000, signal=signal
            )
        except KernelStartError as error:
            return ToolResult.failure(str(error), ToolErrorType.EXECUTION_FAILED)
        finally:
            throttle.close()
        return self._finished(run, rendered, timeout_ms)

    def _finished(self, run: Execution, rendered: _Rendered, timeout_ms: int) -> ToolResult:
        output = rendered.text()
        so_far = " Output so far is below." if output else " It wrote no output."
        notes = [run.state_lost] if run.state_lost else []
        if run.status == "timeout":
            notes.append(
                f"The code ran longer than {timeout_ms} ms and was interrupted; the kernel and its variables "
                f"are kept.{so_far}"
            )
        elif run.status == "cancelled":
            notes.append(
                f"The user cancelled the run and it was interrupted; the kernel and its variables are kept.{so_far}"
            )
        elif run.status == "restarted":
            notes = [
                run.state_lost
                or f"The kernel was restarted while this code ran; its variables are lost.{so_far}"
            ]
        elif run.status == "died":
            message = (
                f"The Python kernel died while running this code (exit code {run.exit_code}); its variables "
                "are lost. The next call starts a new kernel."
            )
            text = f"{message}\nOutput before it died:\n{output}" if output else message
            return ToolResult.failure(text, ToolErrorType.EXECUTION_FAILED, display=text)
        note = "\n".join(notes)
        text = f"{note}\n{output or '(no output)'}" if note else output or "(no output)"
        display: ToolResultDisplay = text
        if len(rendered.images) == 1 and output == rendered.image_lines[0] and not note:
            display = rendered.images[0][1]
        llm: str | list[Part] = text
        if rendered.images:
            llm = [TextPart(text), *(part for part, _ in rendered.images)]
        return ToolResult(llm, display)

    def save_image(self, mime_type: str, data: str) -> tuple[InlineDataPart, ImageDisplay]:
        folder = self._temp_dir() / "images"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{id(self):x}-{next(self._images)}.{IMAGE_TYPES[mime_type]}"
        path.write_bytes(base64.b64decode(data))
        return InlineDataPart(mime_type, data, path.name), ImageDisplay(
            str(path), mime_type, "from the kernel"
        )


class _Rendered:
    """A cell's outputs as text for the model and the user; images saved as they arrive."""

    def __init__(self, tool: CodeInterpreter) -> None:
        self._tool = tool
        self._pieces: list[str] = []
        self._streaming = False
        """Whether the last piece is stream text (the next stream text continues it)."""
        self.images: list[tuple[InlineDataPart, ImageDisplay]] = []
        self.image_lines: list[str] = []

    def _put(self, text: str, stream: bool = False) -> None:
        if stream and self._streaming:
            self._pieces[-1] += text
        else:
            self._pieces.append(text)
        self._streaming = stream

    def add(self, output: KernelOutput) -> None:
        if output.kind == "stream":
            self._put(strip_ansi(output.text), stream=True)
        elif output.kind == "error":
            trace = "\n".join(strip_ansi(line) for line in output.traceback)
            self._put(trace or f"{output.name}: {output.text}")
        else:
            self._add_data(output.data)

    def _add_data(self, data: dict[str, object]) -> None:
        for mime_type in IMAGE_TYPES:
            value = data.get(mime_type)
            if isinstance(value, str):
                try:
                    part, display = self._tool.save_image(mime_type, value.replace("\n", ""))
                except (OSError, ValueError) as error:
                    self._put(f"[{mime_type} image could not be saved: {error}]")
                    return
                self.images.append((part, display))
                line = f"[{mime_type} image saved at {display.path}]"
                self.image_lines.append(line)
                self._put(line)
                return  # its text/plain is only "<Figure size ...>"
        markdown, html, plain = (data.get(key) for key in ("text/markdown", "text/html", "text/plain"))
        if isinstance(markdown, str):
            self._put(markdown)
        elif isinstance(html, str) and (converted := html_to_markdown(html)):
            self._put(converted)
        elif isinstance(plain, str):
            self._put(strip_ansi(plain))

    def text(self) -> str:
        return "\n".join(piece.rstrip("\n") for piece in self._pieces).strip("\n")
