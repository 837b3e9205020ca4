"""Skills in Qwen Code's format: found, offered to the model by name and description, loaded on a call,
and the files beside them readable once loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qcore.extensions import ExtensionSetup
from qcore.extensions.skills import find_skills
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.runtime import SessionConfig, create_session
from tests.support.sessions import quiet_settings

PDF_SKILL = """\
---
name: pdf-forms
description: Fill in PDF forms. Use when the user mentions PDF forms or form fields.
---

# PDF forms

## Instructions
Read [reference.md](reference.md) first, then run `python scripts/fill.py input.pdf`.
"""
HIDDEN_SKILL = """\
---
name: manual-helper
description: Helper you invoke manually
disable-model-invocation: true
---
Only when asked.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def folders(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    write(root / "app.py", "x = 1\n")
    write(home / ".qwen" / "skills" / "pdf-forms" / "SKILL.md", PDF_SKILL)
    write(home / ".qwen" / "skills" / "pdf-forms" / "reference.md", "Field names are case-sensitive.\n")
    write(home / ".qwen" / "skills" / "pdf-forms" / "scripts" / "fill.py", "print('filled')\n")
    write(home / ".qwen" / "skills" / "manual-helper" / "SKILL.md", HIDDEN_SKILL)
    write(
        root / ".qwen" / "skills" / "release" / "SKILL.md",
        "---\nname: release\ndescription: Cut a release.\n---\nTag it.\n",
    )
    write(root / ".qwen" / "skills" / "broken" / "SKILL.md", "---\nname: broken\n---\nno description\n")
    return root, home


def session(root: Path, home: Path, steps: list[Any], trusted: bool = True):
    llm = ScriptedLLM(steps)
    made, _ = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace([root]),
            settings=quiet_settings(),
            home=home,
            plugins=False,
            system_prompt="be brief",
            extensions=ExtensionSetup(project_trusted=trusted),
        )
    )
    return made, llm


def test_skills_are_found_with_their_frontmatter(tmp_path: Path) -> None:
    root, home = folders(tmp_path)
    found = find_skills(root, home, project_trusted=True)
    assert sorted(found.skills) == ["manual-helper", "pdf-forms", "release"]
    assert [s.name for s in found.for_model()] == ["pdf-forms", "release"]
    assert found.skills["release"].origin == "project"
    assert found.problems == [
        f"{root / '.qwen/skills/broken/SKILL.md'}: needs a description in its frontmatter"
    ]
    untrusted = find_skills(root, home, project_trusted=False)
    assert "release" not in untrusted.skills and untrusted.held_back == ["broken", "release"]


async def test_the_model_sees_names_and_descriptions_and_loads_a_body_with_its_folder(tmp_path: Path) -> None:
    root, home = folders(tmp_path)
    folder = home / ".qwen" / "skills" / "pdf-forms"
    steps = [
        reply("", ("skill", {"skill": "pdf-forms"})),
        reply("", ("read_file", {"absolute_path": str(folder / "reference.md")})),
        reply("done"),
    ]
    made, llm = session(root, home, steps)
    outcome = await made.send("fill in the PDF form")
    assert outcome.text == "done"
    declared = next(t for t in made.registry.declarations() if t["function"]["name"] == "skill")
    description = declared["function"]["description"]
    assert (
        "- pdf-forms: Fill in PDF forms. Use when the user mentions PDF forms or form fields." in description
    )
    assert "- release: Cut a release." in description
    assert "manual-helper" not in description and "Read [reference.md]" not in description
    loaded = [str(m.content) for m in llm.requests[1] if m.role == "tool"][-1]
    assert f"Its folder is {folder.resolve()}" in loaded and "- reference.md" in loaded
    assert "- scripts/fill.py" in loaded and "# PDF forms" in loaded
    read = [str(m.content) for m in llm.requests[2] if m.role == "tool"][-1]
    assert "Field names are case-sensitive." in read


async def test_an_unknown_skill_names_the_ones_there_are(tmp_path: Path) -> None:
    root, home = folders(tmp_path)
    made, llm = session(root, home, [reply("", ("skill", {"skill": "manual-helper"})), reply("ok")])
    await made.send("go")
    answer = [str(m.content) for m in llm.requests[1] if m.role == "tool"][-1]
    assert "No skill named 'manual-helper'. Available skills: pdf-forms, release." in answer


async def test_a_skills_folder_is_not_readable_before_it_is_loaded(tmp_path: Path) -> None:
    root, home = folders(tmp_path)
    reference = home / ".qwen" / "skills" / "pdf-forms" / "reference.md"
    made, llm = session(
        root, home, [reply("", ("read_file", {"absolute_path": str(reference)})), reply("ok")]
    )
    await made.send("go")
    answer = [str(m.content) for m in llm.requests[1] if m.role == "tool"][-1]
    assert "case-sensitive" not in answer


def test_without_skills_the_tool_is_not_offered(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    made, _ = session(root, tmp_path / "home", [])
    assert "skill" in made.registry.names
    assert all(t["function"]["name"] != "skill" for t in made.registry.declarations())


async def test_the_user_runs_a_skill_as_a_command_and_its_body_is_never_expanded(tmp_path: Path) -> None:
    from qcore.extensions.prompts import prepare_prompt

    root, home = folders(tmp_path)
    write(
        home / ".claude" / "skills" / "deploy" / "SKILL.md",
        "---\nname: deploy\ndescription: Deploy it.\n---\nRun !{touch pwned} then @{secret}.\n",
    )
    write(
        home / ".qwen" / "skills" / "quiet" / "SKILL.md",
        "---\nname: quiet\ndescription: x\nuser-invocable: false\n---\nq\n",
    )
    made, _ = session(root, home, [])
    listed = {c.name: c.origin for c in made.extensions.listed_commands()}  # type: ignore[union-attr]
    assert listed["deploy"] == "skill" and listed["pdf-forms"] == "skill" and "quiet" not in listed
    prepared = await prepare_prompt(made, "/deploy to staging")
    assert prepared.text is not None and prepared.text.endswith(
        "Run !{touch pwned} then @{secret}.\n\nto staging"
    )
    assert not (root / "pwned").exists()
    assert (home / ".claude" / "skills" / "deploy").resolve() in made.workspace.extra_readable


def test_plain_frontmatter_is_read_as_yaml_reads_it_without_loading_yaml() -> None:
    import yaml

    from qcore.extensions.frontmatter import _simple

    cases = [
        "name: pdf-forms\ndescription: Fill in PDF forms. Use when the user mentions PDF forms.",
        "description: Generate Commit message based on staged changes",
        "name: x\ndisable-model-invocation: true\nuser-invocable: False",
        "description: a, b and c (with brackets) and C:\\path",
        "description: he said \"hi\" at http://x.y/z",
        "description: a: b", "description: note:", "description: 'quoted'", "name: 12", "description: yes",
        "description: foo # comment", "tools: [a, b]", "name: x\nname: y", "description: -dash",
        "description: 50% off", "description: ~", "paths:\n  - 'src/**'",
    ]  # fmt: skip
    for case in cases:
        simple = _simple(case)
        try:
            expected = yaml.safe_load(case)
        except yaml.YAMLError:
            expected = None
        assert simple is None or simple == expected, case
    assert _simple(cases[0]) is not None and _simple(cases[2]) == {
        "name": "x",
        "disable-model-invocation": True,
        "user-invocable": False,
    }
