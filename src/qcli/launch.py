"""Everything past flag parsing: settings, the model client, the session, and which front end runs it.

``prepare`` and ``build_session`` are shared by the headless run and the TUI, so both put a session
together the same way; the TUI calls them after its first frame, in a worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qcli.demo import DEMO_PROMPT
from qcli.headless.run import HeadlessPrinter, run_headless
from qcli.main import EXIT_AUTH, EXIT_CONFIG, EXIT_INPUT
from qcore.abort import AbortSignal
from qcore.agent.session import Session
from qcore.conversation.state import SessionFileError
from qcore.conversation.store import SessionStore
from qcore.events import EventBus
from qcore.execution.sandbox import detect_sandbox, sandbox_warnings
from qcore.extensions import ExtensionSetup, HookLayer, project_held_back
from qcore.files.workspace import Workspace, project_root
from qcore.llm.scripted import ScriptedLLM
from qcore.llm.types import ChatMessage, LLMClient, LLMError, LLMErrorKind, StreamItem
from qcore.permissions import ApprovalMode, Approver
from qcore.permissions.rules import Rule
from qcore.permissions.settings_rules import SettingsRuleStore, rules_from_flags, rules_from_settings
from qcore.runtime import SessionConfig, create_session
from qcore.settings import FolderTrust, HeldBack, Settings, load_settings

if TYPE_CHECKING:
    from qcore.execution.shell_runner import ShellRunner
    from qcore.files.access import FileAccess

DEFAULT_MODEL = "qwen3-coder-plus"


@dataclass(frozen=True)
class ModelConfig:
    model: str
    api_key: str | None
    base_url: str | None

    @property
    def configured(self) -> bool:
        return bool(self.api_key or self.base_url)


NO_MODEL = (
    "No model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a server other than OpenAI's), "
    "or security.auth.apiKey / security.auth.baseUrl in ~/.qwen/settings.json."
)


class NoModel:
    """Stands in for the model when none is configured: every request says what to set."""

    model = "no model"

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]], signal: AbortSignal
    ) -> AsyncIterator[StreamItem]:
        raise LLMError(NO_MODEL, LLMErrorKind.NOT_CONFIGURED)
        yield  # pragma: no cover  (makes this an async generator)


def resolve_model_config(args: argparse.Namespace, settings: Settings, env: dict[str, str]) -> ModelConfig:
    """Flags, then environment, then settings (Qwen Code's order)."""
    auth = settings.security.auth
    return ModelConfig(
        model=args.model
        or env.get("OPENAI_MODEL")
        or env.get("QWEN_MODEL")
        or settings.model.name
        or DEFAULT_MODEL,
        api_key=args.openai_api_key or env.get("OPENAI_API_KEY") or auth.api_key,
        base_url=args.openai_base_url or env.get("OPENAI_BASE_URL") or auth.base_url,
    )


def resolve_approval_mode(args: argparse.Namespace, settings: Settings) -> ApprovalMode:
    if args.approval_mode:
        return ApprovalMode(args.approval_mode)
    if args.yolo:
        return ApprovalMode.YOLO
    return ApprovalMode(settings.tools.approval_mode or "default")


def read_prompt(args: argparse.Namespace) -> str | None:
    prompt: str | None = args.prompt if args.prompt is not None else args.query
    if not sys.stdin.isatty():
        piped = sys.stdin.read()
        if piped.strip():
            prompt = f"{prompt}\n\n{piped}" if prompt else piped
    return prompt


def _say(text: str) -> None:
    from qcli.terminal_text import visible

    sys.stderr.write(f"qcli: {visible(text)}\n")  # it may quote a file's name or a server's error


@dataclass
class Launch:
    """What a run starts from: the folder, the settings in force, the mode, the rules and the model."""

    cwd: Path
    """The project: the git repository's top level holding the folder qcli was started in (else that
    folder); its settings, context and ignore files apply."""
    settings: Settings
    mode: ApprovalMode
    rules: list[Rule]
    model: ModelConfig
    problems: list[str] = field(default_factory=list)
    """Settings and tool problems to show the user; the run goes on without what failed."""
    demo: bool = False
    max_turns: int | None = None
    resume_id: str | None = None
    """The saved session to go on with (``--continue``, ``--resume``); None starts a new one."""
    trust: FolderTrust | None = None
    held_back: list[HeldBack] = field(default_factory=list)
    """What the project's settings would start or allow, not applied because the folder is not trusted."""
    broken: list[Path] = field(default_factory=list)
    """Settings files that are there but could not be parsed: none of their rules apply."""
    start: Path | None = None
    """The folder qcli was started in, inside the project: relative paths and commands start there."""
    include: list[Path] = field(default_factory=list)
    """More workspace folders (``--include-directories``)."""
    debug_log: Path | None = None
    """``--debug``: the file events, requests and engine logs go to."""
    extensions: ExtensionSetup | None = None
    """Where the user's commands, skills and hooks come from (None: the demo's scratch copy loads none)."""

    @property
    def asks_trust(self) -> bool:
        """Whether the user should be asked to trust the folder: something was held back, nothing decided."""
        return bool(self.held_back) and self.trust is not None and not self.trust.decided

    def llm(self) -> LLMClient | None:
        """The model client, or None when no model is configured (the demo has its own)."""
        if self.demo:
            from qcli.demo import demo_model

            return demo_model(self.cwd)
        if not self.model.configured:
            return None
        client, problems = openai_client(
            self.settings, self.model.model, self.model.api_key, self.model.base_url
        )
        self.problems.extend(problems)
        return client


def openai_client(
    settings: Settings,
    model: str,
    api_key: str | None,
    base_url: str | None,
    generation: Mapping[str, Any] | None = None,
) -> tuple[LLMClient, tuple[str, ...]]:
    """A client for ``model`` made as ``model.generationConfig`` says (with ``generation``, a
    ``modelProviders`` entry's own, over it), and what in those settings was ignored."""
    from qcore.llm.generation import generation_config
    from qcore.llm.openai import OpenAIClient
    from qcore.llm.tokens import default_window

    raw = {**(settings.model.generation_config or {}), **(generation or {})}
    window = settings.model.context_window_size or default_window(model)
    config = generation_config(raw, os.environ, window=window)
    client = OpenAIClient.configured(model=model, api_key=api_key, base_url=base_url, generation=config)
    return client, config.problems


def prepare(args: argparse.Namespace, cwd: Path | None = None) -> Launch:
    """Settings, mode, rules and model for ``args``; the demo gets a scratch copy and no user settings."""
    if args.demo:
        from qcli.demo import copy_sample_project

        scratch = copy_sample_project()
        mode = resolve_approval_mode(args, Settings())
        rules = list(rules_from_flags(args.allowed_tools or ()))
        config = ModelConfig("demo (scripted)", None, None)
        return Launch(scratch, Settings(), mode, rules, config, demo=True, max_turns=args.max_session_turns)
    start = (cwd or Path.cwd()).resolve()
    cwd = project_root(start)
    loaded = load_settings(cwd, trust=True if getattr(args, "trust_folder", False) else None)
    rules = [*rules_from_settings(loaded), *rules_from_flags(args.allowed_tools or ())]
    problems = [f"settings: {problem}" for problem in loaded.problems]
    held = list(loaded.held_back)
    if loaded.trust is not None and not loaded.trust.trusted:
        held += [HeldBack("start", text) for text in project_held_back(cwd)]
    return Launch(
        cwd,
        loaded.settings,
        resolve_approval_mode(args, loaded.settings),
        rules,
        resolve_model_config(args, loaded.settings, dict(os.environ)),
        problems,
        max_turns=args.max_session_turns,
        resume_id=getattr(args, "resume_id", None),
        trust=loaded.trust,
        held_back=held,
        broken=[source.path for source in loaded.sources if source.broken],
        start=start,
        include=included_folders(args, start),
        debug_log=_debug_log(args, cwd),
        extensions=ExtensionSetup(
            project_trusted=loaded.project_trusted,
            hook_layers=tuple(
                HookLayer(scope, path, data["hooks"])
                for scope, path, data in loaded.applied
                if "hooks" in data
            ),
            hooks_disabled=loaded.raw.get("disableAllHooks") is True,
            context_file=(loaded.settings.context.file_names or ["QWEN.md"])[0],
        ),
    )


def _debug_log(args: argparse.Namespace, root: Path) -> Path | None:
    if not getattr(args, "debug", False):
        return None
    from qcli.debug_log import start_debug_log
    from qcore.files.storage import project_temp_dir

    return start_debug_log(project_temp_dir(root))


def included_folders(args: argparse.Namespace, start: Path) -> list[Path]:
    """``--include-directories``: comma-separated, repeatable, relative to where qcli was started."""
    folders: list[Path] = []
    for entry in getattr(args, "include_directories", None) or ():
        for part in filter(None, (piece.strip() for piece in entry.split(","))):
            folder = (start / Path(part).expanduser()).resolve()
            if not folder.is_dir():
                raise SystemExit(f"qcli: --include-directories: {part} is not a folder")
            folders.append(folder)
    return folders


def held_back_report(launch: Launch, front_end: str = "cli") -> str:
    """What an untrusted folder's settings would have started and allowed, and how to trust it."""
    trust = launch.trust
    assert trust is not None
    lines = [
        f"this folder is not trusted ({trust.reason}), so its .qwen/settings.json was applied only in part."
    ]
    lines += [f"  held back: {item}" for item in launch.held_back]
    if front_end == "cli":
        lines.append(
            f'  To trust it: run with --trust-folder (this run only), or add "{trust.folder}": "TRUST_FOLDER" '
            "to ~/.qwen/trustedFolders.json."
        )
    elif front_end == "acp":
        lines.append(
            f'  To trust it: add "{trust.folder}": "TRUST_FOLDER" to ~/.qwen/trustedFolders.json and open a '
            "new session."
        )
    return "\n".join(lines)


def build_session(
    launch: Launch,
    llm: LLMClient,
    approver: Approver | None,
    events: EventBus | None = None,
    *,
    saved: bool = True,
    file_access: FileAccess | None = None,
    shell_runner: ShellRunner | None = None,
) -> Session:
    """The session for ``launch``; ``saved``: its events go to the project's session files (the demo's
    scratch copy keeps none). ``file_access`` and ``shell_runner``: the front end's own (an ACP client's)."""
    state = None
    if saved and not launch.demo:
        store = SessionStore(launch.cwd)
        state = store.load(launch.resume_id) if launch.resume_id else store.new_state(llm.model)
    session, problems = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace.for_project(launch.cwd, cwd=launch.start, include=launch.include),
            settings=launch.settings,
            mode=launch.mode,
            approver=approver,
            max_turns=launch.max_turns,
            rules=launch.rules,
            rule_store=SettingsRuleStore(launch.cwd),
            events=events,
            state=state,
            file_access=file_access,
            shell_runner=shell_runner,
            extensions=launch.extensions,
            trusted=launch.trust is None or launch.trust.trusted,
        )
    )
    launch.problems.extend(problems)
    launch.problems.extend(sandbox_warnings(detect_sandbox(), launch.settings.tools.sandbox))
    if launch.debug_log is not None:
        from qcli.debug_log import EventLog

        session.events.subscribe(EventLog())
        launch.problems.append(f"debug log: {launch.debug_log}")
    return session


def remove_scratch(launch: Launch) -> None:
    """The demo's scratch copy goes when the run ends."""
    if launch.demo:
        shutil.rmtree(launch.cwd, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    """``-p``, ``--show-prompt`` and the demo without a terminal: no questions can be asked."""
    launch = prepare(args)
    try:
        return _run_headless(args, launch)
    except SessionFileError as error:
        _say(f"cannot go on with that session: {error}")
        return EXIT_INPUT
    finally:
        remove_scratch(launch)


def _run_headless(args: argparse.Namespace, launch: Launch) -> int:
    approver: Approver | None = None
    if args.show_prompt:
        prompt = ""
        llm: LLMClient | None = ScriptedLLM([])
    elif launch.demo:
        prompt = DEMO_PROMPT
        if sys.stdin.isatty():
            from qcli.headless.console import ConsoleApprover

            approver = ConsoleApprover(files=SettingsRuleStore(launch.cwd).paths)
        _say(f"demo: a scripted model (no API key) working in a scratch copy at {launch.cwd}")
        if approver is None and launch.mode not in (ApprovalMode.AUTO_EDIT, ApprovalMode.YOLO):
            _say(
                "demo: no terminal to ask in, so the edit will be refused; run it in a terminal, or add --yolo"
            )
        _say(f"> {prompt}")
        llm = launch.llm()
    else:
        read = read_prompt(args)
        if read is None or not read.strip():
            _say("no prompt: pass one with -p or pipe it on standard input")
            return EXIT_INPUT
        prompt = read
        llm = launch.llm()
        if llm is None:
            _say(
                f"{NO_MODEL} Or pass --openai-api-key / --openai-base-url. To try qcli without a key: qcli --demo"
            )
            return EXIT_AUTH
    assert llm is not None
    if launch.broken and not args.show_prompt:
        for problem in launch.problems:
            _say(problem)
        files = ", ".join(str(path) for path in launch.broken)
        _say(
            f"not running: {files} cannot be read, so its rules (deny rules too) would be silently left out. "
            "Fix the file and run again."
        )
        return EXIT_CONFIG
    session = build_session(launch, llm, approver, saved=not args.show_prompt)
    for problem in launch.problems:
        _say(problem)
    if launch.held_back:
        _say(held_back_report(launch))
    if launch.resume_id:
        prompts = sum(1 for m in session.history if m.role == "user")
        _say(f"going on with session {session.session_id[:12]} ({prompts} earlier prompts)")
    if args.show_prompt:
        return asyncio.run(_show_prompt_and_close(session))
    return asyncio.run(_run_and_close(session, llm, prompt, HeadlessPrinter(args.output_format)))


async def _show_prompt_and_close(session: Session) -> int:
    try:
        await session.tools_ready()
        return show_prompt(session)
    finally:
        await session.aclose()


def show_prompt(session: Session) -> int:
    """Exactly what the first request would carry before the user's words (MCP and discovered tools
    included, once their sources are ready), with its size."""
    system = next((str(m.content) for m in session.history if m.role == "system"), "")
    declared = session.registry.declarations()
    size = len(json.dumps(declared, ensure_ascii=False))  # as sent: compact
    from qcli.terminal_text import json_text, visible

    # Context files and MCP servers wrote much of this: shown, not obeyed, by the terminal.
    sys.stdout.write(f"{visible(system)}\n\n--- tools ---\n{json_text(declared, indent=2)}\n")
    _say(f"system prompt {len(system)} characters + tool declarations {size} = {len(system) + size}")
    return 0


async def _run_and_close(session: Session, llm: LLMClient, prompt: str, printer: HeadlessPrinter) -> int:
    try:
        return await run_headless(session, prompt, printer)
    finally:
        await session.aclose()
        close = getattr(llm, "aclose", None)
        if close is not None:
            await close()
