"""Everything past flag parsing: settings, the model client, the session, and which front end runs it."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from qcli.headless import HeadlessPrinter, run_headless
from qcli.main import EXIT_AUTH, EXIT_INPUT
from qcore.agent import Session
from qcore.llm.scripted import ScriptedLLM
from qcore.llm.types import LLMClient
from qcore.permissions import ApprovalMode, Approver
from qcore.permissions.settings_rules import SettingsRuleStore, rules_from_flags, rules_from_settings
from qcore.runtime import create_session
from qcore.settings import Settings, load_settings
from qcore.workspace import Workspace

DEFAULT_MODEL = "qwen3-coder-plus"


@dataclass(frozen=True)
class ModelConfig:
    model: str
    api_key: str | None
    base_url: str | None


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
    sys.stderr.write(f"qcli: {text}\n")


@dataclass
class Job:
    """What to run: where, with which model, prompt and approver."""

    cwd: Path
    settings: Settings
    llm: LLMClient
    prompt: str
    approver: Approver | None = None


def demo_job(mode: ApprovalMode) -> Job:
    from qcli.console import ConsoleApprover
    from qcli.demo import DEMO_PROMPT, copy_sample_project, demo_model

    cwd = copy_sample_project()
    interactive = sys.stdin.isatty()
    _say(f"demo: a scripted model (no API key) working in a scratch copy at {cwd}")
    if not interactive and mode not in (ApprovalMode.AUTO_EDIT, ApprovalMode.YOLO):
        _say("demo: no terminal to ask in, so the edit will be refused; run it in a terminal, or add --yolo")
    _say(f"> {DEMO_PROMPT}")
    return Job(cwd, Settings(), demo_model(cwd), DEMO_PROMPT, ConsoleApprover() if interactive else None)


def headless_job(args: argparse.Namespace, cwd: Path, settings: Settings) -> Job | int:
    """The job for ``-p``, or the exit code when there is nothing to run."""
    prompt = read_prompt(args)
    if prompt is None or not prompt.strip():
        if sys.stdin.isatty():
            _say("the interactive UI is not built yet; pass a prompt with -p, or try qcli --demo")
        else:
            _say("no prompt: pass one with -p or pipe it on standard input")
        return EXIT_INPUT
    config = resolve_model_config(args, settings, dict(os.environ))
    if not config.api_key and not config.base_url:
        _say(
            "no model configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a server other than OpenAI's), "
            "or pass --openai-api-key / --openai-base-url. To try qcli without a key: qcli --demo"
        )
        return EXIT_AUTH
    from qcore.llm.openai_client import OpenAIClient

    llm = OpenAIClient(model=config.model, api_key=config.api_key, base_url=config.base_url)
    return Job(cwd, settings, llm, prompt)


def run(args: argparse.Namespace) -> int:
    cwd = Path.cwd()
    loaded = load_settings(cwd)
    for settings_problem in loaded.problems:
        _say(f"settings: {settings_problem}")
    mode = resolve_approval_mode(args, loaded.settings)
    if args.show_prompt and not args.demo:
        job: Job | int = Job(cwd, loaded.settings, ScriptedLLM([]), "")
    else:
        job = demo_job(mode) if args.demo else headless_job(args, cwd, loaded.settings)
    if isinstance(job, int):
        return job
    rules = [*([] if args.demo else rules_from_settings(loaded)), *rules_from_flags(args.allowed_tools or ())]
    session, problems = create_session(
        llm=job.llm,
        workspace=Workspace.for_project(job.cwd),
        settings=job.settings,
        mode=mode,
        approver=job.approver,
        max_turns=args.max_session_turns,
        rules=rules,
        rule_store=SettingsRuleStore(job.cwd),
    )
    for problem in problems:
        _say(problem)
    if args.show_prompt:
        return show_prompt(session)
    return asyncio.run(_run_and_close(session, job, HeadlessPrinter(args.output_format)))


def show_prompt(session: Session) -> int:
    """Exactly what the first request would carry before the user's words, with its size."""
    system = next((str(m.content) for m in session.history if m.role == "system"), "")
    declared = session.registry.declarations()
    size = len(json.dumps(declared, ensure_ascii=False))  # as sent: compact
    sys.stdout.write(f"{system}\n\n--- tools ---\n{json.dumps(declared, indent=2, ensure_ascii=False)}\n")
    _say(f"system prompt {len(system)} characters + tool declarations {size} = {len(system) + size}")
    return 0


async def _run_and_close(session: Session, job: Job, printer: HeadlessPrinter) -> int:
    try:
        return await run_headless(session, job.prompt, printer)
    finally:
        await session.aclose()
        close = getattr(job.llm, "aclose", None)
        if close is not None:
            await close()
