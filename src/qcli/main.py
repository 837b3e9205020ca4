"""Command-line entry: parse flags, answer ``--version`` before importing anything heavy, then run the TUI
(a terminal and no prompt, or ``-i``) or the headless mode (``-p``, a positional prompt, piped input).

Exit codes follow Qwen Code: 0 done, 1 model or runtime error, 2 bad flags, 41 auth, 42 input,
52 a settings file that cannot be parsed (headless runs refuse to go on without its rules), 53 turn limit,
130 cancelled.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from qcore._version import __version__

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_AUTH = 41
EXIT_INPUT = 42
EXIT_CONFIG = 52
EXIT_TURN_LIMIT = 53
EXIT_CANCELLED = 130

APPROVAL_MODES = ("plan", "default", "auto-edit", "yolo")
OUTPUT_FORMATS = ("text", "json", "stream-json")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qcli",
        description="A coding assistant in your terminal. Every edit and command waits for your approval.",
    )
    _prompt_flags(parser)
    _model_flags(parser)
    _mode_flags(parser)
    _permission_flags(parser)
    _session_flags(parser)
    _other_flags(parser)
    return parser


def _prompt_flags(parser: argparse.ArgumentParser) -> None:
    """What to send, and where the answer goes."""
    parser.add_argument("query", nargs="*", help="the prompt, run once without the interactive UI (as -p)")
    parser.add_argument(
        "-p", "--prompt", help="run one prompt without the interactive UI; piped stdin is appended"
    )
    parser.add_argument(
        "-i", "--prompt-interactive", metavar="PROMPT", help="open the interactive UI and send this prompt"
    )


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", help="model name (else OPENAI_MODEL, then settings model.name)")
    parser.add_argument(
        "--openai-api-key", help="API key (else OPENAI_API_KEY, then settings security.auth.apiKey)"
    )
    parser.add_argument("--openai-base-url", help="OpenAI-compatible base URL, usually ending in /v1")


def _mode_flags(parser: argparse.ArgumentParser) -> None:
    """How a run goes: what runs without a question, and what a headless run prints."""
    parser.add_argument(
        "--approval-mode", choices=APPROVAL_MODES, help="what runs without asking (default: default)"
    )
    parser.add_argument("-y", "--yolo", action="store_true", help="run every tool call without asking")
    parser.add_argument(
        "-o", "--output-format", choices=OUTPUT_FORMATS, default="text", help="headless output format"
    )


def _permission_flags(parser: argparse.ArgumentParser) -> None:
    """Rules that run calls unasked, and the folders the tools may touch."""
    parser.add_argument(
        "--allowed-tools",
        action="append",
        metavar="RULE",
        help="a rule that runs without asking, e.g. 'run_shell_command(npm test:*)' (repeatable)",
    )
    parser.add_argument(
        "--trust-folder",
        action="store_true",
        help="trust this folder for this run: its .qwen/settings.json may start servers and allow tools",
    )
    parser.add_argument(
        "--include-directories",
        action="append",
        metavar="DIR[,DIR...]",
        help="more folders the tools may read and change, beside the project (repeatable)",
    )


def _session_flags(parser: argparse.ArgumentParser) -> None:
    """How long a session runs, and which saved one to go on with."""
    parser.add_argument(
        "--max-session-turns", type=int, help="stop after this many requests to the model (exit 53)"
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="go on with the latest session of this project (with -p too)",
    )
    parser.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="go on with a saved session of this project; without ID, choose from a list",
    )


def _other_flags(parser: argparse.ArgumentParser) -> None:
    """Other ways to run: show the prompt, the demo, a debug log, ACP, the version."""
    parser.add_argument(
        "--show-prompt",
        action="store_true",
        help="print the system prompt and tool declarations as sent, and exit",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="a scripted model (no API key) works in a scratch copy of a sample project, in the UI when "
        "there is a terminal",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="log every event, model request and tool decision to a file (its path is printed)",
    )
    parser.add_argument(
        "--acp",
        action="store_true",
        help="speak the Agent Client Protocol on stdin/stdout, for editors such as Zed and Toad",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--verbose", action="store_true", help="with --version: also the sandbox in use")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    from qcore.execution.credentials import hide_own_environment

    hide_own_environment()
    if words[:1] == ["mcp"]:  # a subcommand, as in Qwen Code: qcli mcp list | add | remove
        from qcli.mcp_command import run_mcp
        from qcore.execution.tracker import end_children_on_exit

        end_children_on_exit()
        return run_mcp(words[1:])
    parser = build_parser()
    args = parser.parse_args(words)
    if args.version:
        return _print_version(args.verbose)
    from qcore.execution.tracker import end_children_on_exit

    end_children_on_exit()  # nothing a command left running outlives qcli, SIGTERM and SIGHUP included
    _check_flags(parser, args)
    if args.acp:
        from qcli.acp.server import run_acp

        return run_acp(args)
    if args.continue_session or args.resume is not None:
        from qcli.resume import choose_session

        code = choose_session(args)
        if code is not None:
            return code
    return _run(parser, args)


def _print_version(verbose: bool) -> int:
    print(__version__)
    if verbose:
        from qcore.execution.sandbox import detect_sandbox, sandbox_status
        from qcore.settings import load_settings

        setting = load_settings(Path.cwd()).settings.tools.sandbox
        print(f"sandbox: {sandbox_status(detect_sandbox(), setting)}")
    return EXIT_OK


def _check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse flags that contradict each other, and rules that do not parse (``parser.error`` exits 2);
    join the positional words into ``args.query``."""
    if args.yolo and args.approval_mode:
        parser.error("--yolo and --approval-mode cannot be used together. Use --approval-mode=yolo instead.")
    if args.allowed_tools:
        from qcore.permissions.rules import RuleSyntaxError, split_rule

        for entry in args.allowed_tools:
            try:
                split_rule(entry)
            except RuleSyntaxError as error:
                parser.error(f"--allowed-tools: {error}")
    args.query = " ".join(args.query) or None
    if args.prompt is not None and args.query is not None:
        parser.error("give the prompt either with -p or as an argument, not both")
    if args.prompt_interactive is not None and (args.prompt is not None or args.query is not None):
        parser.error("-i opens the interactive UI; it cannot be combined with -p or a positional prompt")
    if args.continue_session and args.resume is not None:
        parser.error("--continue and --resume cannot be used together")
    if args.acp:
        if args.prompt is not None or args.query is not None or args.prompt_interactive is not None:
            parser.error("--acp takes its prompts from the editor; it cannot be combined with a prompt")
        if args.continue_session or args.resume is not None or args.show_prompt:
            parser.error(
                "--acp: the editor opens and loads sessions; drop --continue, --resume, --show-prompt"
            )


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The interactive UI when it is wanted and there is a terminal for it; else one prompt, headless."""
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    wants_ui = args.prompt_interactive is not None or (
        args.prompt is None and args.query is None and not args.show_prompt and sys.stdin.isatty()
    )
    if wants_ui and terminal:
        from qcli.tui.entry import run_tui  # Textual and our widgets; the engine loads after the first frame

        return run_tui(args)
    if args.prompt_interactive is not None:
        parser.error("-i needs a terminal; use -p to run a prompt without one")
    if wants_ui and not args.demo:
        sys.stderr.write("qcli: the interactive UI needs a terminal on stdout; use -p to run one prompt\n")
        return EXIT_INPUT

    from qcli.launch import run  # the engine and its dependencies load only past this point

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
