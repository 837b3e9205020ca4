"""Views and qcore's records in ACP's shapes: tool calls, their content, plans, modes, commands, questions.

Pure functions with no connection and no session, so each mapping can be tested on its own. A tool
call arrives as its view (``qcli.event_view.CallView``), the same one the TUI and ``-p`` draw. An edit
becomes ``diff`` content (path, old text, new text) both in the permission request and in the call's
card; a command is shown whole; a finished call carries what its result displays.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from acp.schema import (
    AgentPlanUpdate,
    AvailableCommand,
    AvailableCommandInput,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    PlanEntry,
    SessionMode,
    SessionModeState,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

from qcli.commands.host import markdown_table
from qcli.commands.table import COMMANDS
from qcli.event_view import CallView, PastCall
from qcore.calls import ToolCallState
from qcore.extensions import CustomCommand

if TYPE_CHECKING:
    from qcore.discovery.mcp import McpPrompt
from qcore.permissions import ApprovalMode, ApprovalRequest, Decision
from qcore.permissions.rules import RuleSource
from qcore.text.diffs import FileDiff
from qcore.tools.confirmation import ConfirmationDetails
from qcore.tools.results import TodoListDisplay, ToolResultDisplay, display_text

if TYPE_CHECKING:
    from qcore.tools.base import AnyTool

Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
Status = Literal["pending", "in_progress", "completed", "failed"]

MODE_NAMES = {
    ApprovalMode.PLAN: ("Plan", "Read and plan only: nothing is changed or run."),
    ApprovalMode.DEFAULT: ("Default", "Edits and commands wait for your approval."),
    ApprovalMode.AUTO_EDIT: ("Auto-edit", "Edits run unasked; commands wait for your approval."),
    ApprovalMode.YOLO: ("Yolo", "Every edit and every command runs without a question."),
}

ACP_COMMANDS = tuple(command for command in COMMANDS if command.name not in ("quit", "theme", "vim"))
"""Slash commands an editor can offer; the editor, not a command, ends the agent, and draws its colours."""

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)


def text(value: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=value))


def fenced(body: str, language: str = "") -> str:
    """Markdown code block whose fence is longer than any run of backticks inside."""
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{language}\n{body}\n{fence}"


def details_content(details: ConfirmationDetails) -> list[Content]:
    """What a question shows: the whole change or the whole command."""
    if details.type == "edit":
        return [
            FileEditToolCallContent(
                type="diff", path=one.file_path, old_text=one.original_content, new_text=one.new_content
            )
            for one in details.files
        ]
    if details.type == "exec":
        return [text(fenced(details.command, "sh"))]
    if details.type == "code":
        return [text(fenced(details.code, details.language))]
    if details.type == "mcp":
        return [text(f"{details.tool_display_name} from MCP server {details.server_name}")]
    if details.type == "info":
        return [text("\n".join([details.prompt, *details.urls]))]
    return [text(details.plan)]


def display_content(display: ToolResultDisplay, path: str | None = None) -> list[Content]:
    """What a finished call shows: its diff (at ``path``, the absolute one, when known), its checklist or
    its text."""
    if isinstance(display, FileDiff):
        return [
            FileEditToolCallContent(
                type="diff",
                path=path or display.file_name,
                old_text=display.original_content,
                new_text=display.new_content,
            )
        ]
    shown = display_text(display)
    return [text(shown)] if shown else []


def status(state: ToolCallState) -> Status:
    if state is ToolCallState.EXECUTING:
        return "in_progress"
    if state is ToolCallState.SUCCESS:
        return "completed"
    if state in (ToolCallState.ERROR, ToolCallState.CANCELLED):
        return "failed"
    return "pending"


def title(call: CallView) -> str:
    return f"{call.title}: {call.description}" if call.description else call.title


def _card(call: CallView, locations: list[ToolCallLocation], content: list[Content] | None) -> dict[str, Any]:
    """What a card says about a call, first shown or updated."""
    return {
        "tool_call_id": call.call_id,
        "title": title(call),
        "kind": call.kind.value,
        "status": status(call.state),
        "content": content,
        "locations": locations or None,
    }


def start(call: CallView, locations: list[ToolCallLocation]) -> ToolCallStart:
    """The card for a call the client has not seen yet."""
    content = details_content(call.confirmation) if call.confirmation else None
    return ToolCallStart(
        session_update="tool_call", raw_input=call.raw_input, **_card(call, locations, content)
    )


def terminal(terminal_id: str) -> TerminalToolCallContent:
    return TerminalToolCallContent(type="terminal", terminal_id=terminal_id)


def progress(
    call: CallView, locations: list[ToolCallLocation], terminal_id: str | None = None
) -> ToolCallProgress:
    """A later state of a call: its status, and once finished what it shows (or why it failed). A call
    that runs in the client's terminal (``terminal_id``) keeps showing it, and once finished its output and
    exit code as text as well."""
    content: list[Content] | None = None
    if terminal_id is not None:  # the output and the exit code too, for clients that show only an id
        content = [terminal(terminal_id)]
        if call.state.terminal:
            content.append(text(call.response))
    elif call.state.terminal:
        if call.state is ToolCallState.SUCCESS and call.display is not None:
            details = call.confirmation
            path = details.file_path if details is not None and details.type == "edit" else None
            content = display_content(call.display, path) or [text(call.response)]
        else:
            content = [text(call.response)]
    elif call.confirmation is not None:
        content = details_content(call.confirmation)
    raw = call.raw_input if not call.state.terminal else None
    return ToolCallProgress(
        session_update="tool_call_update", raw_input=raw, **_card(call, locations, content)
    )


def plan(display: TodoListDisplay) -> AgentPlanUpdate:
    """``todo_write``'s list as the editor's plan."""
    states: dict[str, Literal["pending", "in_progress", "completed"]] = {
        "in_progress": "in_progress",
        "completed": "completed",
    }
    entries = [
        PlanEntry(content=item.content, priority="medium", status=states.get(item.status, "pending"))
        for item in display.items
    ]
    return AgentPlanUpdate(session_update="plan", entries=entries)


def modes(current: ApprovalMode) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current.value,
        available_modes=[
            SessionMode(id=mode.value, name=name, description=description)
            for mode, (name, description) in MODE_NAMES.items()
        ],
    )


def help_text() -> str:
    """``/help`` in an editor: the commands it can run; no terminal keys, and no ``/quit`` (the editor
    ends the agent)."""
    rows = [(f"`/{c.name}{' ' + c.usage if c.usage else ''}`", c.summary) for c in ACP_COMMANDS]
    return (
        "### Commands\n\n"
        + markdown_table(("command", "does"), rows)
        + "\n\n`@path` in a prompt attaches a file; the editor's own keys stop a turn and approve calls."
    )


def available_commands(
    custom: Sequence[CustomCommand] = (), prompts: Sequence[McpPrompt] = ()
) -> list[AvailableCommand]:
    """The built-in commands an editor can offer, then the user's and the project's own (a custom
    command never takes a built-in command's name)."""
    builtin = [
        AvailableCommand(
            name=command.name,
            description=command.summary,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=command.usage))
            if command.usage
            else None,
        )
        for command in ACP_COMMANDS
    ]
    taken = {command.name for command in COMMANDS}
    own = [
        AvailableCommand(
            name=command.name,
            description=command.description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint="arguments")),
        )
        for command in custom
        if command.name not in taken
    ]
    taken |= {command.name for command in custom}
    served = [
        AvailableCommand(
            name=prompt.name,
            description=f"MCP: {prompt.server} · {prompt.description or prompt.title or prompt.name}",
            input=AvailableCommandInput(
                root=UnstructuredCommandInput(
                    hint=" ".join(f"--{a.name}=…" for a in prompt.arguments) or "help"
                )
            ),
        )
        for prompt in prompts
        if prompt.name not in taken
    ]
    return builtin + own + served


PLAN_OPTIONS = [
    PermissionOption(option_id=ALLOW_ALWAYS, name="Yes, and auto-accept edits", kind="allow_always"),
    PermissionOption(option_id=ALLOW_ONCE, name="Yes, and manually approve edits", kind="allow_once"),
    PermissionOption(option_id=REJECT_ONCE, name="No, keep planning", kind="reject_once"),
]
"""A plan's answers (``exit_plan_mode``): go on in auto-edit, go on in the default mode, keep planning."""


def permission_options(request: ApprovalRequest) -> list[PermissionOption]:
    """Allow once / allow always (when a rule can cover the call) / reject once / reject always; for a
    plan, ``PLAN_OPTIONS``."""
    if request.details.type == "plan":
        return list(PLAN_OPTIONS)
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    if request.suggested_rules:
        rules = ", ".join(request.suggested_rules)
        options.append(
            PermissionOption(option_id=ALLOW_ALWAYS, name=f"Allow always ({rules})", kind="allow_always")
        )
    options.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
    if request.suggested_rules:
        rules = ", ".join(request.suggested_rules)
        options.append(
            PermissionOption(option_id=REJECT_ALWAYS, name=f"Reject always ({rules})", kind="reject_always")
        )
    return options


QUESTION_TITLE_CHARS = 120
"""A question's title names what it is about, cut to this many characters (the content has it whole)."""


def question_title(request: ApprovalRequest) -> str:
    """What a question is about, in its title: the command, the file, the server's tool, the page; a
    client that shows only the title still shows what is being approved."""
    details = request.details
    match details.type:
        case "exec":
            subject = f"Run {details.command.strip()}"
        case "edit":
            subject = f"{request.display_name} {details.file_path}"
        case "code":
            subject = f"Run {details.language} code: {details.code.strip()}"
        case "mcp":
            subject = f"{details.tool_display_name} from MCP server {details.server_name}"
        case "info":
            subject = f"{request.display_name} {' '.join(details.urls) or details.prompt}"
        case _:
            subject = f"{request.display_name}: {details.title}"
    subject = " ".join(subject.split())  # one line
    if len(subject) > QUESTION_TITLE_CHARS:
        subject = subject[: QUESTION_TITLE_CHARS - 1] + "…"
    return subject


def notice_card(call_id: str, title: str, body: str) -> ToolCallStart:
    """qcli's own news (start-up notices) as a finished card of its own: not the model's words."""
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=title,
        kind="other",
        status="completed",
        content=[text(body)],
    )


def question(request: ApprovalRequest, locations: list[ToolCallLocation]) -> ToolCallUpdate:
    """The call a permission request is about, with the whole change or command."""
    by = f"{request.subagent} › " if request.subagent else ""
    return ToolCallUpdate(
        tool_call_id=request.call_id,
        title=f"{by}{question_title(request)}",
        kind=request.kind.value,
        status="pending",
        content=details_content(request.details),
        locations=locations or None,
        raw_input=dict(request.arguments),
    )


def decision(option_id: str | None, request: ApprovalRequest) -> Decision:
    """The client's choice as qcore's answer; "always" is the rule the TUI would add for this session (for
    a plan: go on in auto-edit)."""
    if request.details.type == "plan":
        if option_id in (ALLOW_ONCE, ALLOW_ALWAYS):
            return Decision.always() if option_id == ALLOW_ALWAYS else Decision.once()
        return Decision.reject("The user wants to keep planning; refine the plan or ask what to change.")
    if option_id == ALLOW_ONCE:
        return Decision.once()
    if option_id == ALLOW_ALWAYS and request.suggested_rules:
        return Decision.always(RuleSource.SESSION, request.suggested_rules)
    if option_id == REJECT_ALWAYS:
        return Decision.reject(
            f"The user refused this and every call like it ({', '.join(request.suggested_rules)})."
        )
    if option_id is None:
        return Decision.reject("The user cancelled the request.")
    return Decision.reject()


PAST_RESULT_CHARS = 4000
"""A past call's result is shown up to this many characters (the model read it whole)."""


def past_call(view: PastCall, tool: AnyTool | None) -> ToolCallStart:
    """A call of a loaded session as a finished card: its tool's title and kind, whether it succeeded
    (from what the model read back), its arguments as an object, an edit as a diff."""
    raw = _arguments(view.arguments)
    kind, title = "other", view.name
    if tool is not None:
        kind, title = tool.kind.value, tool.display_name
        try:
            description = tool.get_description(tool.parse_params(raw))
        except Exception:  # arguments the tool refused: the card shows its name
            description = ""
        if description:
            title = f"{title}: {description}"
    failed = view.result.startswith(("[Operation Cancelled]", "Error"))
    content: list[Content] = [] if failed else _argument_diff(raw)
    if view.result:
        shown = view.result
        if len(shown) > PAST_RESULT_CHARS:
            shown = shown[:PAST_RESULT_CHARS] + f"\n… {len(shown) - PAST_RESULT_CHARS} more characters"
        content.append(text(shown))
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=view.call_id,
        title=title,
        kind=kind,  # type: ignore[arg-type]
        status="failed" if failed else "completed",
        content=content or None,
        raw_input=raw,
    )


def _arguments(arguments: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"arguments": arguments}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def _argument_diff(raw: dict[str, Any]) -> list[Content]:
    """An edit's change as the arguments give it (the file may have moved on since)."""
    path = raw.get("file_path")
    if not isinstance(path, str):
        return []
    if isinstance(raw.get("old_string"), str) and isinstance(raw.get("new_string"), str):
        return [
            FileEditToolCallContent(
                type="diff", path=path, old_text=raw["old_string"], new_text=raw["new_string"]
            )
        ]
    if isinstance(raw.get("content"), str):
        return [FileEditToolCallContent(type="diff", path=path, old_text=None, new_text=raw["content"])]
    return []
