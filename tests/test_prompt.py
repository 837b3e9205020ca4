import json
import subprocess
import sys
from pathlib import Path

from qcore.conversation.prompt import PROMPT_BUDGET, git_state
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.tools.names import canonical_tool_name, rename_parameters


def test_prompt_and_every_declaration_fit_the_budget(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TAVILY_API_KEY", "k")  # web_search declared too
    (tmp_path / "QWEN.md").write_text("")
    session, _ = create_session(
        SessionConfig(
            ScriptedLLM([]),
            Workspace([tmp_path]),
            Settings(),
            ApprovalMode.DEFAULT,
            home=tmp_path,
            plugins=False,
        )
    )
    names = session.registry.names
    assert {
        "read_file",
        "edit",
        "write_file",
        "grep_search",
        "glob",
        "list_directory",
        "read_many_files",
    } <= set(names)
    assert {"run_shell_command", "save_memory", "todo_write", "web_fetch", "web_search"} <= set(names)
    size = len(str(session.history[0].content)) + len(
        json.dumps(session.registry.declarations(), ensure_ascii=False)
    )
    assert size <= PROMPT_BUDGET, size


def test_the_environment_names_the_branch_and_dirty_state(tmp_path: Path) -> None:
    assert git_state(tmp_path) == "not a git repository"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    (tmp_path / "a").write_text("1")
    subprocess.run(["git", "-C", str(tmp_path), "add", "a"], check=True)
    commit = [
        "git",
        "-C",
        str(tmp_path),
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@e.invalid",
        "commit",
        "-qm",
        "x",
    ]
    subprocess.run(commit, check=True)
    assert git_state(tmp_path) == "git branch trunk, clean"
    (tmp_path / "a").write_text("2")
    assert git_state(tmp_path) == "git branch trunk, uncommitted changes"


def test_show_prompt_prints_what_would_be_sent(tmp_path: Path) -> None:
    qcli = str(Path(sys.executable).with_name("qcli"))
    result = subprocess.run([qcli, "--show-prompt"], cwd=tmp_path, capture_output=True, text=True, check=True,
                            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})  # fmt: skip
    system, _, tools = result.stdout.partition("\n--- tools ---\n")
    assert system.startswith("You are qcli") and str(tmp_path) in system
    assert [d["function"]["name"] for d in json.loads(tools)][:2] == ["list_directory", "read_file"]
    assert "system prompt" in result.stderr and "characters" in result.stderr


def test_aliases_apply_only_when_unambiguous() -> None:
    registered = {"edit", "read_file", "write_file", "run_shell_command"}
    assert canonical_tool_name("replace", registered) == "edit"
    assert canonical_tool_name("bash", registered) == "run_shell_command"
    assert canonical_tool_name("grep", registered) is None  # its target is not registered
    assert canonical_tool_name("edit", registered) is None  # already a real name
    params = {"file_path", "old_string", "new_string", "replace_all"}
    assert rename_parameters({"path": "a", "old_str": "x", "new_str": "y"}, params) == (
        {"file_path": "a", "old_string": "x", "new_string": "y"},
        ["path -> file_path", "old_str -> old_string", "new_str -> new_string"],
    )
    assert rename_parameters({"path": "a", "file": "b"}, params)[1] == []  # two candidates: leave it
    assert rename_parameters({"file_path": "a", "path": "b"}, params)[1] == []  # canonical already sent
