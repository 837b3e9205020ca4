"""``/clear``, ``/compress``, ``/chat`` and ``/memory``: what the model sees of the conversation.

Start afresh, summarise the older turns, save a conversation by name and take it up again, or show,
add to and reload the project's memory and context files that the system prompt carries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcli.commands.host import markdown_table
from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost
    from qcore.tools.results import ToolResult

__all__ = ["chat", "clear", "compress", "memory"]


async def clear(host: CommandHost, args: str) -> None:
    host.session.clear()
    await host.clear_conversation()
    host.notice("Conversation cleared; the model starts afresh.")


async def compress(host: CommandHost, args: str) -> None:
    session = host.session
    if session.sending:
        host.notice(
            "The model is busy: /compress works between turns (Esc stops the turn).", Severity.WARNING
        )
        return
    host.notice("Compressing the older turns…")
    fit = await session.compress()
    if fit.ok and fit.compressed is None:
        host.notice(
            f"Nothing older to compress: the conversation ({fit.tokens:,} tokens) is the latest turn."
        )


async def chat(host: CommandHost, args: str) -> None:
    """Gemini CLI's ``/chat``: conversations saved by name in this project, to take up again later."""
    from qcli.resume import session_rows
    from qcore.conversation.store import SessionNotFound, SessionStore

    store = SessionStore(host.session.cwd)
    verb, _, tag = args.strip().partition(" ")
    tag = tag.strip()
    if verb == "list" or not verb:
        chats = store.saved_chats()
        if not chats:
            host.show("No saved chats in this project. `/chat save NAME` saves this one.")
            return
        rows = [(f"`{name}`", *session_rows([info])[0][1:]) for name, info in chats]
        host.show(
            "### Saved chats\n\n" + markdown_table(("name", "saved", "turns", "size", "first prompt"), rows)
        )
        return
    if verb not in ("save", "resume", "load", "delete") or not tag:
        host.notice("Usage: /chat list | save NAME | resume NAME | delete NAME", Severity.WARNING)
        return
    try:
        path = store.saved_path(tag)
    except ValueError as error:
        host.notice(str(error), Severity.WARNING)
        return
    state = host.session.state
    if verb == "save":
        if path.exists() and not await host.confirm(f"A chat is already saved as {tag!r}. Replace it?"):
            host.notice("Not saved.")
            return
        store.save_chat(state, tag)
        turns = sum(1 for m in state.history if m.role == "user")
        host.notice(f"Saved this conversation as {tag!r} ({turns} prompts).", Severity.SUCCESS)
    elif verb == "delete":
        if not path.exists():
            host.notice(f"No chat saved as {tag!r}.", Severity.WARNING)
            return
        path.unlink()
        host.notice(f"Deleted the saved chat {tag!r}.", Severity.SUCCESS)
    else:
        try:
            saved = store.load_chat(tag)
        except (SessionNotFound, ValueError) as error:
            host.notice(str(error), Severity.WARNING)
            return
        state.replace_history(saved.history)
        state.set_todos(saved.todos)
        await host.clear_conversation()
        host.show_history(saved.history)
        host.notice(f"Took up the chat saved as {tag!r}; the model sees it from here on.", Severity.SUCCESS)


async def memory(host: CommandHost, args: str) -> None:
    session = host.session
    verb, _, rest = args.strip().partition(" ")
    if verb in ("", "show"):
        loaded = session.context_files() if session.context_files else None
        if loaded is None or not loaded.paths:
            host.show("No memory or context files are loaded (`QWEN.md`, `AGENTS.md`).")
            return
        listing = "\n".join(f"- `{path}`" for path in loaded.paths)
        host.show(f"### Memory and context ({len(loaded.text):,} characters)\n\n{listing}")
        return
    if verb == "reload":
        session.refresh_system_prompt()
        host.notice("Memory and context files reloaded.", Severity.SUCCESS)
        return
    if verb == "add":
        tool = session.registry.get("save_memory")
        if tool is None or not rest.strip():
            host.notice("Usage: /memory add <fact to remember>", Severity.WARNING)
            return
        result: ToolResult = await tool.save_directly(rest.strip())  # type: ignore[attr-defined]
        if result.error is not None:
            host.notice(result.error.message, Severity.ERROR)
            return
        session.refresh_system_prompt()
        host.notice(result.text(), Severity.SUCCESS)
        return
    host.notice("Usage: /memory show | add <fact> | reload", Severity.WARNING)
