"""A project's discovery and call commands, as one real script: ``python discovery_scripts.py <mode>``.

Discovery modes: ``discover`` (every accepted shape, plus bad entries), ``hang``, ``crash``, ``flood``,
``garbage``, ``object``. Call mode: ``call <tool name>`` with the arguments as JSON on stdin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

OBJECT_WITH_TEXT = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What to echo."},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
    },
    "required": ["text"],
}

DECLARATIONS: list[Any] = [
    {"name": "echo_args", "description": "Echo argv and stdin.", "parametersJsonSchema": OBJECT_WITH_TEXT},
    {
        "function_declarations": [
            {
                "name": "json_result",
                "description": "Answer in JSON.",
                "parameters": {"type": "OBJECT", "properties": {"query": {"type": "STRING"}}},
            },
            {"description": "I have no name."},
        ]
    },
    {
        "functionDeclarations": [
            {"name": "fail_tool"},
            {
                "name": "bad_schema",
                "parametersJsonSchema": {"type": "object", "properties": {"x": {"type": "strin"}}},
            },
        ]
    },
    {
        "type": "function",
        "function": {"name": "sleepy", "description": "Never ends.", "parameters": {"type": "object"}},
    },
    {"name": "split_utf8"},
    {"name": "stderr_ok"},
    {"name": "my tool!", "description": "Spaces are not allowed in API names."},
    {"name": "echo_args", "description": "A second one."},
    {"name": "list_params", "parametersJsonSchema": {"type": "array"}},
    42,
]

SLEEP_FOREVER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"


def out(data: bytes, stream: Any = None) -> None:
    target = stream or sys.stdout.buffer
    target.write(data)
    target.flush()


def call(tool: str) -> int:
    raw = sys.stdin.read()
    arguments: Any = json.loads(raw) if raw else {}
    if tool in ("echo_args", "my tool!"):
        print(json.dumps({"argv": sys.argv[2:], "arguments": arguments, "cwd": os.getcwd()}))
    elif tool == "json_result":
        print(json.dumps({"llmContent": f"found {arguments['query']}", "returnDisplay": "1 result"}))
    elif tool == "split_utf8":
        for piece in (b"caf\xc3", b"\xa9 \xe2\x82", b"\xac\n"):  # "café €" cut inside both characters
            out(piece)
            time.sleep(0.05)
    elif tool == "stderr_ok":
        out(b"a warning\n", sys.stderr.buffer)
        print("fine")
    elif tool == "fail_tool":
        out(b"partial output\n")
        out(b"bad thing happened\n", sys.stderr.buffer)
        return 2
    elif tool == "sleepy":
        child = subprocess.Popen([sys.executable, "-c", SLEEP_FOREVER])
        out(f"grandchild {child.pid}\n".encode())
        time.sleep(3600)
    else:
        out(f"unknown tool {tool}\n".encode(), sys.stderr.buffer)
        return 1
    return 0


def main() -> int:
    mode = sys.argv[1]
    if mode == "discover":
        print(json.dumps(DECLARATIONS))
    elif mode == "hang":
        out(b"[")
        time.sleep(3600)
    elif mode == "crash":
        out(b"config file missing: tools.yaml\n", sys.stderr.buffer)
        return 3
    elif mode == "flood":
        while True:
            out(b"x" * 65536)
    elif mode == "garbage":
        print('[{"name": "x",]')
    elif mode == "object":
        print(json.dumps({"name": "lonely"}))
    elif mode == "call":
        return call(sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
