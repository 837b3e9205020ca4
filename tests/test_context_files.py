"""Context files read from a fake home and a project tree under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.conversation.context_files import load_context


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".qwen").mkdir(parents=True)
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "repo" / "pkg" / "deep").mkdir(parents=True)
    return tmp_path / "repo"


def test_files_are_read_from_home_then_root_down_to_cwd(home: Path, root: Path) -> None:
    (home / ".qwen" / "QWEN.md").write_text("user rules")
    (home / ".qwen" / "AGENTS.md").write_text("user agents")
    (root / "AGENTS.md").write_text("root agents")
    (root / "QWEN.md").write_text("root rules\n")
    (root / "pkg" / "QWEN.md").write_text("pkg rules")
    (root / "pkg" / "deep" / "AGENTS.md").write_text("deep agents")
    (root / "pkg" / "sibling.md").write_text("not a context file")
    loaded = load_context(root, root / "pkg" / "deep", home=home)
    assert loaded.paths == [
        home / ".qwen" / "QWEN.md",
        home / ".qwen" / "AGENTS.md",
        root / "QWEN.md",
        root / "AGENTS.md",
        root / "pkg" / "QWEN.md",
        root / "pkg" / "deep" / "AGENTS.md",
    ]
    order = ["user rules", "user agents", "root rules", "root agents", "pkg rules", "deep agents"]
    positions = [loaded.text.index(text) for text in order]
    assert positions == sorted(positions)
    assert (
        f"--- Context from {root / 'QWEN.md'} ---\nroot rules\n--- End of context from {root / 'QWEN.md'} ---"
        in (loaded.text)
    )
    assert "not a context file" not in loaded.text and not loaded.truncated


def test_only_the_chain_to_cwd_is_read(home: Path, root: Path) -> None:
    (root / "pkg" / "deep" / "QWEN.md").write_text("deep")
    (root / "QWEN.md").write_text("top")
    assert load_context(root, root, home=home).paths == [root / "QWEN.md"]
    outside = root.parent / "elsewhere"
    outside.mkdir()
    (outside / "QWEN.md").write_text("outside")
    assert load_context(root, outside, home=home).paths == [root / "QWEN.md"]


def test_nothing_to_read(home: Path, root: Path) -> None:
    loaded = load_context(root, root, home=home)
    assert loaded.text == "" and loaded.paths == []


def test_names_empty_files_folders_and_bad_bytes(home: Path, root: Path) -> None:
    (root / "QWEN.md").write_bytes(b"caf\xe9\r\nline two\r\n")
    (root / "AGENTS.md").mkdir()
    (root / "CUSTOM.md").write_text("   \n")
    (root / "pkg" / "CUSTOM.md").write_text("custom")
    loaded = load_context(root, root / "pkg", home=home, file_names=["QWEN.md", "AGENTS.md", "CUSTOM.md"])
    assert loaded.paths == [root / "QWEN.md", root / "pkg" / "CUSTOM.md"]
    assert "caf\ufffd\nline two" in loaded.text and "\r" not in loaded.text


def test_the_total_is_capped_with_a_note(home: Path, root: Path) -> None:
    (home / ".qwen" / "QWEN.md").write_text("small user file")
    (root / "QWEN.md").write_text("r" * 5_000)
    (root / "pkg" / "QWEN.md").write_text("never included")
    loaded = load_context(root, root / "pkg", home=home, max_chars=2_000)
    assert loaded.truncated and len(loaded.text) <= 2_000
    assert loaded.paths == [home / ".qwen" / "QWEN.md", root / "QWEN.md"]
    assert "small user file" in loaded.text and "never included" not in loaded.text
    assert loaded.text.endswith(
        f"[Context cut at 2,000 characters: {root / 'QWEN.md'} was cut short and later context files were left out.]"
    )


def test_a_file_with_no_room_left_is_named_as_left_out(home: Path, root: Path) -> None:
    (root / "QWEN.md").write_text("a" * 150)
    (root / "AGENTS.md").write_text("b" * 150)
    first = load_context(root, root, home=home, file_names=["QWEN.md"]).text
    cap = len(first) + 60  # room for the first file and a little of the second's header
    loaded = load_context(root, root, home=home, max_chars=cap)
    assert loaded.paths == [root / "QWEN.md"] and loaded.text.startswith(first)
    assert loaded.text.endswith(f"{root / 'AGENTS.md'} was left out.]")


def test_a_project_cannot_pull_outside_files_into_the_prompt(home: Path, root: Path) -> None:
    secret = home / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY\n")
    (root / "QWEN.md").symlink_to(secret)  # a cloned repository's link to the user's key
    (root / "AGENTS.md").write_text("project rules\n")
    loaded = load_context(root, root, home=home, file_names=["QWEN.md", "AGENTS.md", "../.ssh/id_rsa"])
    assert "PRIVATE KEY" not in loaded.text and "project rules" in loaded.text
    (home / ".qwen").mkdir(exist_ok=True)
    (home / ".qwen" / "QWEN.md").symlink_to(home / "dotfiles.md")  # the user's own link is theirs to make
    (home / "dotfiles.md").write_text("my preferences\n")
    assert "my preferences" in load_context(root, root, home=home, file_names=["QWEN.md"]).text


def test_home_names_can_differ_from_the_projects(home: Path, root: Path) -> None:
    (home / ".qwen" / "QWEN.md").write_text("user rules")
    (home / ".qwen" / "settings.json").write_text('{"apiKey": "sk-secret"}')
    (root / "settings.json").write_text("project notes")
    loaded = load_context(root, root, home=home, file_names=["settings.json"], home_file_names=["QWEN.md"])
    assert loaded.paths == [home / ".qwen" / "QWEN.md", root / "settings.json"]
    assert "sk-secret" not in loaded.text


def test_a_root_given_through_a_link_still_keeps_project_links_in(home: Path, root: Path) -> None:
    (home / "secret").write_text("PRIVATE KEY\n")
    (root / "QWEN.md").symlink_to(home / "secret")
    link = root.parent / "link"
    link.symlink_to(root)
    assert "PRIVATE KEY" not in load_context(link, link, home=home).text
