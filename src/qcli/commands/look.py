"""``/theme``: the colours of the TUI, from Textual's themes (a light one among them); ``/vim``: the
prompt's vim mode.

Only a front end that draws its own screen and prompt has these: it is a ``ThemeHost`` too. An editor
shows qcli in its own colours and its own input box, so there the commands say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost

__all__ = ["ThemeHost", "theme", "vim"]


@runtime_checkable
class ThemeHost(Protocol):
    def theme_names(self) -> list[str]: ...

    def current_theme(self) -> str: ...

    def set_theme(self, name: str) -> None: ...

    def toggle_vim(self) -> bool: ...


async def theme(host: CommandHost, args: str) -> None:
    if not isinstance(host, ThemeHost):
        host.notice("Themes are the TUI's; the editor draws qcli in its own colours.")
        return
    name = args.strip()
    names = host.theme_names()
    if not name:
        current = host.current_theme()
        listed = ", ".join(f"**{n}** (in use)" if n == current else f"`{n}`" for n in names)
        host.show(f"### Themes\n\n{listed}\n\n`/theme NAME` switches (`textual-light` is a light one).")
        return
    if name not in names:
        near = [n for n in names if name.lower() in n.lower()]
        if len(near) != 1:
            hint = f" Did you mean {', '.join(near)}?" if near else " /theme lists them."
            host.notice(f"No theme {name!r}.{hint}", Severity.WARNING)
            return
        name = near[0]
    host.set_theme(name)
    host.notice(f"Theme: {name} (for this session).", Severity.SUCCESS)


async def vim(host: CommandHost, args: str) -> None:
    if not isinstance(host, ThemeHost):
        host.notice("Vim mode is the TUI prompt's; the editor's input box is its own.")
        return
    if host.toggle_vim():
        host.notice("Vim mode on: Esc for normal mode (h j k l, w b, 0 $, x, dd, i a o); /vim turns it off.")
    else:
        host.notice("Vim mode off.")
