"""Stale-file checks, media, binary and ignore handling, and round-trips of encodings and line endings."""

import base64
import codecs
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qcore.abort import AbortSignal
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.edit import Edit
from qcore.tools.read_file import ReadFile
from qcore.tools.results import ToolErrorType
from qcore.tools.write_file import WriteFile
from qcore.workspace import Workspace

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace([tmp_path]))


async def run(tool, raw):  # type: ignore[no-untyped-def]
    return await tool.execute(tool.build(raw), AbortSignal())


async def test_an_edit_to_a_file_changed_since_it_was_read_is_refused(
    tmp_path: Path, context: ToolContext
) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\ny = 2\n")
    await run(ReadFile(context), {"absolute_path": str(target)})
    target.write_text("x = 1\ny = 2\nz = 3\n")  # the user edits it meanwhile
    result = await run(
        Edit(context), {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 5"}
    )
    assert result.error and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert "changed since you last read it" in result.error.message
    assert target.read_text() == "x = 1\ny = 2\nz = 3\n"
    await run(ReadFile(context), {"absolute_path": str(target)})
    again = await run(Edit(context), {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 5"})
    assert again.ok and target.read_text() == "x = 1\ny = 5\nz = 3\n"
    follow_up = await run(
        Edit(context), {"file_path": str(target), "old_string": "z = 3", "new_string": "z = 4"}
    )
    assert follow_up.ok  # its own write counts as seen


async def test_a_file_changed_after_the_diff_was_shown_is_not_written(
    tmp_path: Path, context: ToolContext
) -> None:
    target = tmp_path / "b.txt"
    target.write_text("one\ntwo\n")
    tool = WriteFile(context)
    params = tool.build({"file_path": str(target), "content": "replaced\n"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert question is not None
    target.write_text("one\ntwo\nthree\n")
    result = await tool.execute(params, AbortSignal())
    assert result.error and "changed after the diff was shown" in result.error.message
    assert target.read_text() == "one\ntwo\nthree\n"


async def test_images_and_pdfs_are_parts_binary_is_named(tmp_path: Path, context: ToolContext) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    image = await run(ReadFile(context), {"absolute_path": "dot.png"})
    assert image.ok and image.return_display == "Read image file: dot.png"
    [media] = image.media()
    assert media.mime_type == "image/png" and base64.b64decode(media.data) == PNG
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\n1 0 obj\n<<>>\nendobj\n")
    assert (await run(ReadFile(context), {"absolute_path": "doc.pdf"})).media()[
        0
    ].mime_type == "application/pdf"
    (tmp_path / "data.bin").write_bytes(bytes(range(256)) * 4)
    binary = await run(ReadFile(context), {"absolute_path": "data.bin"})
    assert binary.text() == "Cannot display content of binary file: data.bin"
    (tmp_path / "icon.svg").write_text("<svg></svg>")
    assert (await run(ReadFile(context), {"absolute_path": "icon.svg"})).text() == "<svg></svg>"
    (tmp_path / "types.ts").write_text("let x: number = 1;\n")
    assert (await run(ReadFile(context), {"absolute_path": "types.ts"})).text() == "let x: number = 1;"


async def test_qwenignored_files_are_refused_and_offset_past_the_end_is_explained(
    tmp_path: Path, context: ToolContext
) -> None:
    (tmp_path / ".qwenignore").write_text("secrets/\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("k")
    with pytest.raises(ToolParamsError, match=r"ignored by \.qwenignore"):
        ReadFile(context).build({"absolute_path": "secrets/key.txt"})
    (tmp_path / "short.txt").write_text("a\nb\n")
    past = await run(ReadFile(context), {"absolute_path": "short.txt", "offset": 5})
    assert past.error and "past the end" in past.error.message and "2 lines" in past.error.message


ENCODINGS = [("utf-8", b""), ("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE), ("latin-1", b"")]
line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=20
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(line_text, min_size=2, max_size=12),
    target=st.integers(min_value=0, max_value=11),
    replacement=line_text,
    newline=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
    encoding=st.sampled_from(ENCODINGS),
)
async def test_edits_round_trip_encoding_bom_and_line_endings(
    tmp_path: Path,
    lines: list[str],
    target: int,
    replacement: str,
    newline: str,
    final_newline: bool,
    encoding: tuple[str, bytes],
) -> None:
    name, bom = encoding
    if name == "latin-1":
        lines = [line.encode("latin-1", "replace").decode("latin-1") for line in lines]
        replacement = replacement.encode("latin-1", "replace").decode("latin-1")
        if all(not line for line in lines):
            lines[0] = "\xe9t\xe9"  # make sure it is not plain UTF-8
    index = target % len(lines)
    marker = f"@@{index}@@"
    lines[index] = marker + lines[index]
    text = newline.join(lines) + (newline if final_newline else "")
    path = tmp_path / f"f{abs(hash((tuple(lines), newline, name)))}.txt"
    raw = bom + text.encode(name)
    if name == "latin-1":
        try:
            raw.decode("utf-8")
            return  # indistinguishable from UTF-8: nothing to check for this sample
        except UnicodeDecodeError:
            pass
    path.write_bytes(raw)
    context = ToolContext(Workspace([tmp_path]))
    result = await run(
        Edit(context), {"file_path": str(path), "old_string": marker, "new_string": replacement + "#"}
    )
    expected_lines = list(lines)
    expected_lines[index] = replacement + "#" + lines[index][len(marker) :]
    expected = bom + (newline.join(expected_lines) + (newline if final_newline else "")).encode(name)
    assert result.ok, result.error
    assert path.read_bytes() == expected
