"""Command-line entry: parse flags, answer ``--version`` before importing anything heavy, then run.

Exit codes follow Qwen Code: 0 done, 1 model or runtime error, 2 bad flags, 41 auth, 42 input,
53 turn limit, 130 cancelled.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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
    parser.add_argument("query", nargs="?", help="the prompt (same as -p)")
    parser.add_argument(
        "-p", "--prompt", help="run one prompt without the interactive UI; piped stdin is appended"
    )
    parser.add_argument("-m", "--model", help="model name (else OPENAI_MODEL, then settings model.name)")
    parser.add_argument(
        "--openai-api-key", help="API key (else OPENAI_API_KEY, then settings security.auth.apiKey)"
    )
    parser.add_argument("--openai-base-url", help="OpenAI-compatible base URL, usually ending in /v1")
    parser.add_argument(
        "--approval-mode", choices=APPROVAL_MODES, help="what runs without asking (default: default)"
    )
    parser.add_argument("-y", "--yolo", action="store_true", help="run every tool call without asking")
    parser.add_argument(
        "-o", "--output-format", choices=OUTPUT_FORMATS, default="text", help="headless output format"
    )
    parser.add_argument(
        "--allowed-tools",
        action="append",
        metavar="RULE",
        help="a rule that runs without asking, e.g. 'run_shell_command(npm test:*)' (repeatable)",
    )
    parser.add_argument(
        "--max-session-turns", type=int, help="stop after this many requests to the model (exit 53)"
    )
    parser.add_argument(
        "--show-prompt",
        action="store_true",
        help="print the system prompt and tool declarations as sent, and exit",
    )
    parser.add_argument(
        "--demo", action="store_true", help="a scripted model edits a scratch copy of a sample project"
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(__version__)
        return EXIT_OK
    if args.yolo and args.approval_mode:
        parser.error("--yolo and --approval-mode cannot be used together. Use --approval-mode=yolo instead.")
    if args.prompt is not None and args.query is not None:
        parser.error("give the prompt either with -p or as an argument, not both")

    from qcli.run import run  # the engine and its dependencies load only past this point

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
