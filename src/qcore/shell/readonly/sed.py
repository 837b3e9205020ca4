"""A ``sed`` script that only reads: parsed by the same rules GNU sed uses to split it into commands.

Allowed: addresses (line numbers, ``first~step``, ``$``, ``/regex/`` and ``\\cregexc`` with ``I``/``M``,
``addr,+N``, ``addr,~N``, ``!``), blocks ``{ }``, comments, labels and branches (``: b t T``), the
commands ``= d D F g G h H l n N p P q Q x z``, ``y///`` and ``s///`` with the flags ``g p i I m M``
and a number. Refused: anything that writes, reads another file or runs a command (``w W r R e``,
``s///w``, ``s///e``), the text commands ``a i c`` and everything this parser does not know.

The delimiters of ``s`` and ``y`` are found as GNU sed finds them: a backslash escapes the next
character, a ``[...]`` bracket expression in a regex hides the delimiter (``s/[/]/x/``), a newline
ends the script with an error. So a ``w`` or ``e`` can never hide from this parser inside what it takes
for a regex while sed takes it for a flag.
"""

from __future__ import annotations

SIMPLE = frozenset("=dDFgGhHnNpPxz")
NUMBERED = frozenset("qQl")
LABELLED = frozenset("btT")
S_FLAGS = frozenset("gpiImM0123456789")
BLANKS = " \t"


class _Refused(Exception):
    pass


class _Script:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.depth = 0

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def take(self) -> str:
        char = self.peek()
        self.at += 1
        return char

    def nonblank(self) -> str:
        while self.peek() and self.peek() in BLANKS:
            self.at += 1
        return self.take()

    def integer(self) -> None:
        if not self.peek().isdigit():
            raise _Refused
        while self.peek().isdigit():
            self.at += 1

    def delimited(self, slash: str, regex: bool) -> None:
        """Read up to the closing delimiter (GNU sed's ``match_slash``)."""
        if not slash or slash in "\n\\":
            raise _Refused
        while True:
            char = self.take()
            if char in ("", "\n"):
                raise _Refused
            if char == slash:
                return
            if char == "\\":
                if not self.take():
                    raise _Refused
            elif char == "[" and regex:
                self.bracket()

    def bracket(self) -> None:
        """A bracket expression, up to and including its ``]`` (GNU sed's ``snarf_char_class``)."""
        if self.peek() == "^":
            self.at += 1
        if self.peek() == "]":
            self.at += 1
        state, delimiter = 0, ""
        while True:
            char = self.take()
            if char in ("", "\n"):
                raise _Refused
            if char == "[":
                if state == 0:
                    state = 1
                continue
            if char in ".:=":
                if state == 1:
                    delimiter, state = char, 2
                    continue
                if state == 2 and char == delimiter:
                    state = 3
                    continue
            elif char == "]":
                if state in (0, 1):
                    return
                if state == 3:
                    state = 0
            state &= ~1

    def end_of_command(self) -> None:
        char = self.nonblank()
        if char in ("}", "#"):
            self.at -= 1
        elif char not in ("", "\n", ";"):
            raise _Refused

    def address(self, char: str, second: bool) -> bool:
        if char in ("/", "\\"):
            self.delimited(self.take() if char == "\\" else "/", regex=True)
            while self.nonblank() in ("I", "M"):
                pass
            self.at -= 1
            return True
        if char.isdigit():
            self.at -= 1
            self.integer()
            if self.nonblank() == "~":
                self.nonblank()
                self.at -= 1
                self.integer()
            else:
                self.at -= 1
            return True
        if second and char in "+~":
            self.nonblank()
            self.at -= 1
            self.integer()
            return True
        return char == "$"

    def command(self) -> bool:
        """Read one command; False at the end of the script."""
        char = self.take()
        while char == ";" or char.isspace():
            char = self.take()
        if not char:
            return False
        addressed = self.address(char, second=False)
        if addressed:
            char = self.nonblank()
            if char == ",":
                if not self.address(self.nonblank(), second=True):
                    raise _Refused
                char = self.nonblank()
        if char == "!":
            char = self.nonblank()
        if char == "#" and not addressed:
            while self.peek() not in ("", "\n"):
                self.at += 1
        elif char == "{":
            self.depth += 1
        elif char == "}":
            self.depth -= 1
            if self.depth < 0 or addressed:
                raise _Refused
            self.end_of_command()
        elif char in SIMPLE:
            self.end_of_command()
        elif char in NUMBERED:
            if not self.nonblank().isdigit():
                self.at -= 1
            else:
                self.at -= 1
                self.integer()
            self.end_of_command()
        elif char == ":" or char in LABELLED:
            self.label(required=char == ":")
        elif char == "s":
            slash = self.take()
            self.delimited(slash, regex=True)
            self.delimited(slash, regex=False)
            self.flags()
        elif char == "y":
            slash = self.take()
            self.delimited(slash, regex=False)
            self.delimited(slash, regex=False)
            self.end_of_command()
        else:
            raise _Refused
        return True

    def label(self, *, required: bool) -> None:
        self.nonblank()
        self.at -= 1
        start = self.at
        while self.peek() and self.peek() not in "\n;}#" + BLANKS:
            self.at += 1
        if required and self.at == start:
            raise _Refused

    def flags(self) -> None:
        while True:
            char = self.nonblank()
            if char in ("}", "#"):
                self.at -= 1
                return
            if char in ("", "\n", ";"):
                return
            if char not in S_FLAGS:
                raise _Refused


def script_reads_only(script: str) -> bool:
    """True when every command of ``script`` is one of the reading commands above."""
    parser = _Script(script)
    try:
        while parser.command():
            pass
    except _Refused:
        return False
    return parser.depth == 0
