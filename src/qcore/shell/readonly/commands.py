"""The commands that may run unasked, each with the exact options known to only read.

Every entry is a ``Grammar``: an option table in the syntax of ``qcore.shell.options`` (an option
that is not in it makes the command not read-only), and what else may be given. A command marked
``free`` has no option that writes or runs anything, so a word known only when the line runs (``$f``,
``*.py``, what ``xargs`` appends) cannot make it do more; any other command must get literal words.
Options left out on purpose are named next to their command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from qcore.shell.analysis import Hazard, SimpleCommand, WordKind
from qcore.shell.options import Parsed, parse
from qcore.shell.readonly.git import git_reads_only
from qcore.shell.readonly.sed import script_reads_only
from qcore.shell.words import safe_pattern

_INTEGER = re.compile(r"-?\d+")


@dataclass(frozen=True)
class Grammar:
    options: str = ""
    free: bool = False
    """Every option only reads: words known only at run time are fine."""
    any_words: bool = False
    """No option to check at all (``echo``, ``true``)."""
    numbers: bool = False
    """``-NUM`` is an option (``head -50``)."""
    max_operands: int | None = None
    check: Callable[[Parsed, Sequence[str]], bool] | None = None
    """A further check of the parsed words (``date``: operands are formats)."""
    own: Callable[[SimpleCommand], bool] | None = None
    """A grammar of its own, for the whole command (``git``, ``sed``, ``find``, ``test``)."""


def follows(grammar: Grammar, command: SimpleCommand) -> bool:
    """Whether the words of ``command`` (its name already checked) fit ``grammar``."""
    if grammar.own is not None:
        return grammar.own(command)
    kinds = command.kinds[1:]
    if WordKind.BRACED in kinds:
        return False
    if grammar.any_words:
        return True
    words: list[str] = []
    count_known = not command.open_ended
    for word, kind in zip(command.argv[1:], kinds, strict=True):
        if kind is WordKind.LITERAL:
            words.append(word)
        elif kind is WordKind.PATTERN and safe_pattern(word):
            words.append(word)  # file names that all start like this: operands, how many is not known
            count_known = False
        elif grammar.free:
            words.append("0")  # stands for whatever it will be: an operand or a value
            count_known = False
        else:
            return False
    if command.open_ended and not grammar.free:
        return False
    parsed = parse(words, grammar.options, numbers=grammar.numbers, dash_values=False)
    if parsed.error:
        return False
    if grammar.max_operands is not None and (not count_known or len(parsed.operands) > grammar.max_operands):
        return False
    return grammar.check is None or grammar.check(parsed, words)


# --- grammars of their own --------------------------------------------------------------------------


def _literal_words(command: SimpleCommand) -> bool:
    return all(kind is WordKind.LITERAL for kind in command.kinds) and not command.open_ended


def _git(command: SimpleCommand) -> bool:
    if Hazard.DIRECTORY in command.hazards:
        return False  # another folder may hold a bare repository whose settings run programs
    return _literal_words(command) and git_reads_only(command.argv[1:])


SED_OPTIONS = (
    "-n|--quiet|--silent -E|-r|--regexp-extended -e|--expression= -s|--separate -z|--null-data "
    "-u|--unbuffered -l|--line-length= --debug --sandbox -b|--binary --help --version"
)
"""Left out: ``-i``/``--in-place`` (writes), ``-f``/``--file`` (a script this check cannot see),
``--posix`` (changes how the script is read)."""


def _sed(command: SimpleCommand) -> bool:
    words, kinds = command.argv[1:], command.kinds[1:]
    if command.open_ended or any(
        kind is not WordKind.LITERAL and not (kind is WordKind.PATTERN and safe_pattern(word))
        for word, kind in zip(words, kinds, strict=True)
    ):
        return False
    parsed = parse(words, SED_OPTIONS, dash_values=False)
    if parsed.error:
        return False
    script_at = [
        o.value_index if o.value_index is not None else o.index for o in parsed.options if o.name == "-e"
    ]
    scripts = parsed.values("-e")
    if not scripts:
        if not parsed.operands:
            return False
        script_at, scripts = [parsed.operands[0]], [words[parsed.operands[0]]]
    if any(kinds[at] is not WordKind.LITERAL for at in script_at):
        return False
    return script_reads_only("\n".join(scripts))


FIND_FLAGS = frozenset(
    {
        "-depth", "-d", "-mount", "-xdev", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race",
        "-daystart", "-follow", "-warn", "-nowarn", "-empty", "-nouser", "-nogroup", "-readable",
        "-writable", "-executable", "-true", "-false", "-print", "-print0", "-ls", "-prune", "-quit",
        "(", ")", "!", ",", "-not", "-a", "-and", "-o", "-or",
    }
)  # fmt: skip
FIND_VALUED = frozenset(
    {
        "-maxdepth", "-mindepth", "-regextype", "-name", "-iname", "-path", "-ipath", "-wholename",
        "-iwholename", "-regex", "-iregex", "-lname", "-ilname", "-type", "-xtype", "-size", "-mtime",
        "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-used", "-perm", "-user", "-group", "-uid", "-gid",
        "-links", "-inum", "-samefile", "-newer", "-anewer", "-cnewer", "-fstype", "-printf",
    }
)  # fmt: skip
"""Left out: ``-exec``, ``-execdir``, ``-ok``, ``-okdir`` (run commands), ``-delete``, ``-fprint``,
``-fprint0``, ``-fprintf``, ``-fls`` (write), ``-files0-from``, ``-D``, ``-context``."""
_NEWER = re.compile(r"-newer[aBcmt][aBcmt]")


def _find(command: SimpleCommand) -> bool:
    words, kinds = command.argv[1:], command.kinds[1:]
    if command.open_ended:
        return False
    index = 0
    while index < len(words) and words[index] in ("-H", "-L", "-P") and kinds[index] is WordKind.LITERAL:
        index += 1
    while (
        index < len(words) and not words[index].startswith("-") and words[index] not in ("(", ")", "!", ",")
    ):
        kind = kinds[index]
        if not (kind is WordKind.LITERAL or (kind is WordKind.PATTERN and safe_pattern(words[index]))):
            return False  # a starting point: a pattern of paths is fine, nothing else that is computed
        index += 1
    while index < len(words):
        word = words[index]
        if kinds[index] is not WordKind.LITERAL:
            return False
        if word in FIND_FLAGS:
            index += 1
        elif word in FIND_VALUED or _NEWER.fullmatch(word):
            if index + 1 >= len(words) or kinds[index + 1] is not WordKind.LITERAL:
                return False
            index += 2
        else:
            return False
    return True


ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _test(command: SimpleCommand) -> bool:
    """``test``, ``[ ]``, ``[[ ]]``: file tests and string comparisons; never ``-v``/``-R`` (bash
    evaluates the subscript of the name), and arithmetic comparisons only of literal integers (``[[``
    evaluates their operands as arithmetic)."""
    words, kinds = list(command.argv[1:]), list(command.kinds[1:])
    closing = {"[": "]", "[[": "]]"}.get(command.argv[0])
    if closing is not None:
        if not words or words[-1] != closing:
            return False
        words, kinds = words[:-1], kinds[:-1]
    if command.open_ended:
        return False
    for index, (word, kind) in enumerate(zip(words, kinds, strict=True)):
        if kind is not WordKind.LITERAL and (command.argv[0] != "[[" or kind is not WordKind.DYNAMIC):
            return False
        if kind is WordKind.LITERAL and word in ("-v", "-R"):
            return False
        if kind is WordKind.LITERAL and word in ARITHMETIC_TESTS:
            around = [(words[i], kinds[i]) for i in (index - 1, index + 1) if 0 <= i < len(words)]
            if len(around) != 2 or any(
                k is not WordKind.LITERAL or not _INTEGER.fullmatch(w) for w, k in around
            ):
                return False
    return True


def _printf(command: SimpleCommand) -> bool:
    """The format first (literal, not an option: bash's ``printf -v`` assigns a variable); then anything."""
    words, kinds = command.argv[1:], command.kinds[1:]
    start = 1 if words[:1] == ("--",) else 0
    if start >= len(words) or WordKind.BRACED in kinds:
        return False
    return kinds[start] is WordKind.LITERAL and not words[start].startswith("-")


def _date_formats(parsed: Parsed, words: Sequence[str]) -> bool:
    return all(words[i].startswith("+") for i in parsed.operands)  # date MMDDhhmm sets the clock


def _asks_what(parsed: Parsed, words: Sequence[str]) -> bool:
    return parsed.has("-v", "-V")  # command -v: names what would run; command ls would run ls


SUMS = Grammar("-b|--binary -c|--check --tag -t|--text -z|--zero --ignore-missing --quiet --status --strict -w|--warn --help --version", free=True)  # fmt: skip

COMMANDS: dict[str, Grammar] = {
    "cat": Grammar(
        "-A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number -s|--squeeze-blank -t "
        "-T|--show-tabs -u -v|--show-nonprinting --help --version",
        free=True,
    ),
    "head": Grammar(
        "-c|--bytes= -n|--lines= -q|--quiet|--silent -v|--verbose -z|--zero-terminated --help --version",
        free=True,
        numbers=True,
    ),
    "tail": Grammar(
        "-c|--bytes= -f --follow? -F -n|--lines= --max-unchanged-stats= --pid= -q|--quiet|--silent --retry "
        "-s|--sleep-interval= -v|--verbose -z|--zero-terminated --help --version",
        free=True,
        numbers=True,
    ),
    "wc": Grammar(
        "-c|--bytes -m|--chars -l|--lines --files0-from= -L|--max-line-length -w|--words --total= --help "
        "--version",
        free=True,
    ),
    "ls": Grammar(
        "-a|--all -A|--almost-all --author -b|--escape -B|--ignore-backups -c -C -d|--directory -D|--dired "
        "-f -F --classify? --file-type --full-time -g --group-directories-first -G|--no-group "
        "-h|--human-readable --si -H|--dereference-command-line --dereference-command-line-symlink-to-dir "
        "-i|--inode -k|--kibibytes -l -L|--dereference -m -n|--numeric-uid-gid -N|--literal -o -p "
        "-q|--hide-control-chars --show-control-chars -Q|--quote-name -r|--reverse -R|--recursive -s|--size "
        "-S -t -u -U -v -x -Z|--context --zero -1 --block-size= --format= --hide= --indicator-style= "
        "-I|--ignore= --quoting-style= --sort= --time= --time-style= -T|--tabsize= -w|--width= --color? "
        "--hyperlink? --help --version",
        free=True,
    ),
    "tree": Grammar(
        "-a -d -l -f -x -L= -P= -I= --gitignore --gitfile= --ignore-case --matchdirs --metafirst --prune "
        "--info --infofile= --noreport --charset= --filelimit= --timefmt= -q -N -Q -p -u -g -s -h --si --du "
        "-D --inodes --device -F -v -t -c -U -r --dirsfirst --filesfirst --sort= -i -A -S -n -C -X -J "
        "--fromfile --help --version"
    ),  # left out: -o FILE (writes), -R (writes 00Tree.html in each folder), -H, -T
    "stat": Grammar(
        "-L|--dereference -f|--file-system --cached= -c|--format= --printf= -t|--terse --help --version",
        free=True,
    ),
    "file": Grammar(
        "-b|--brief -c|--checking-printout -e|--exclude= --exclude-quiet= -f|--files-from= -F|--separator= "
        "-i|--mime --mime-type --mime-encoding --apple --extension -k|--keep-going -l|--list "
        "-L|--dereference -h|--no-dereference -m|--magic-file= -n|--no-buffer -N|--no-pad -0|--print0 "
        "-P|--parameter= -r|--raw -s|--special-files -d|--debug "
        "--help -v|--version"
    ),  # left out: -C/--compile (writes magic.mgc), -p/--preserve-date (sets times), -S/--no-sandbox,
    # -z/-Z (libmagic runs external decompressors for some formats)
    "du": Grammar(
        "-0|--null -a|--all --apparent-size -b|--bytes -c|--total -D|--dereference-args -H "
        "-h|--human-readable --inodes -k -L|--dereference -l|--count-links -m -P|--no-dereference "
        "-S|--separate-dirs --si -s|--summarize -x|--one-file-system -B|--block-size= -d|--max-depth= "
        "--files0-from= -t|--threshold= --time? --time-style= -X|--exclude-from= --exclude= --help --version",
        free=True,
    ),
    "df": Grammar(
        "-a|--all -h|--human-readable -H|--si -i|--inodes -k -l|--local --no-sync -P|--portability --sync "
        "--total -T|--print-type -v -B|--block-size= -t|--type= -x|--exclude-type= --output? --help --version",
        free=True,
    ),
    "pwd": Grammar("-L -P", max_operands=0),
    "cd": Grammar("-L -P -e -@", max_operands=1),
    "echo": Grammar(any_words=True),
    "printf": Grammar(own=_printf),  # bash's printf -v assigns a variable (and evaluates its subscript)
    "true": Grammar(any_words=True),
    "false": Grammar(any_words=True),
    ":": Grammar(any_words=True),
    "basename": Grammar("-a|--multiple -s|--suffix= -z|--zero --help --version", free=True),
    "dirname": Grammar("-z|--zero --help --version", free=True),
    "realpath": Grammar(
        "-e|--canonicalize-existing -m|--canonicalize-missing -L|--logical -P|--physical -q|--quiet "
        "--relative-to= --relative-base= -s|--strip|--no-symlinks -z|--zero --help --version",
        free=True,
    ),
    "readlink": Grammar(
        "-f|--canonicalize -e|--canonicalize-existing -m|--canonicalize-missing -n|--no-newline -q|--quiet "
        "-s|--silent -v|--verbose -z|--zero --help --version",
        free=True,
    ),
    "cut": Grammar(
        "-b|--bytes= -c|--characters= -d|--delimiter= -f|--fields= -n --complement -s|--only-delimited "
        "--output-delimiter= -z|--zero-terminated --help --version",
        free=True,
    ),
    "tr": Grammar(
        "-c|-C|--complement -d|--delete -s|--squeeze-repeats -t|--truncate-set1 --help --version", free=True
    ),
    "nl": Grammar(
        "-b|--body-numbering= -d|--section-delimiter= -f|--footer-numbering= -h|--header-numbering= "
        "-i|--line-increment= -l|--join-blank-lines= -n|--number-format= -p|--no-renumber "
        "-s|--number-separator= -v|--starting-line-number= -w|--number-width= --help --version",
        free=True,
    ),
    "tac": Grammar("-b|--before -r|--regex -s|--separator= --help --version", free=True),
    "uniq": Grammar(
        "-c|--count -d|--repeated -D --all-repeated? -f|--skip-fields= --group? -i|--ignore-case "
        "-s|--skip-chars= -u|--unique -z|--zero-terminated -w|--check-chars= --help --version",
        max_operands=1,  # uniq IN OUT writes OUT
    ),
    "sort": Grammar(
        "-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case -g|--general-numeric-sort "
        "-i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort -n|--numeric-sort -R|--random-sort "
        "--random-source= -r|--reverse --sort= -V|--version-sort --batch-size= -c --check? -C -m|--merge "
        "-s|--stable -S|--buffer-size= -t|--field-separator= -k|--key= --parallel= -u|--unique "
        "-z|--zero-terminated --debug --files0-from= --help --version"
    ),  # left out: -o/--output (writes), -T/--temporary-directory, --compress-program (runs a program)
    "grep": Grammar(
        "-E|--extended-regexp -F|--fixed-strings -G|--basic-regexp -P|--perl-regexp -e|--regexp= -f|--file= "
        "-i|-y|--ignore-case --no-ignore-case -w|--word-regexp -x|--line-regexp -z|--null-data "
        "-s|--no-messages -v|--invert-match -V|--version --help -m|--max-count= -b|--byte-offset "
        "-n|--line-number --line-buffered -H|--with-filename -h|--no-filename --label= -o|--only-matching "
        "-q|--quiet|--silent --binary-files= -a|--text -I -d|--directories= -D|--devices= -r|--recursive "
        "-R|--dereference-recursive --include= --exclude= --exclude-from= --exclude-dir= "
        "-L|--files-without-match -l|--files-with-matches -c|--count -T|--initial-tab -Z|--null "
        "-B|--before-context= -A|--after-context= -C|--context= --group-separator= --no-group-separator "
        "--color?|--colour? -U|--binary",
        free=True,
        numbers=True,
    ),
    "rg": Grammar(
        "-a|--text -b|--byte-offset -c|--count --count-matches -F|--fixed-strings -H|--with-filename "
        "-I|--no-filename -i|--ignore-case -l|--files-with-matches --files-without-match -L|--follow "
        "-n|--line-number -N|--no-line-number -o|--only-matching -p|--pretty -q|--quiet -S|--smart-case "
        "-s|--case-sensitive -U|--multiline --multiline-dotall -u|--unrestricted -v|--invert-match "
        "-w|--word-regexp -x|--line-regexp -0|--null --null-data -.|--hidden --no-hidden --files --type-list "
        "--json --no-json --vimgrep --heading --no-heading --column --no-column --crlf --no-crlf --debug "
        "--trace --stats --no-stats --trim --no-trim --passthru|--passthrough --no-ignore --no-ignore-dot "
        "--no-ignore-exclude --no-ignore-files --no-ignore-global --no-ignore-parent --no-ignore-vcs "
        "--no-require-git --no-messages --no-ignore-messages --no-config --no-mmap --mmap --no-unicode "
        "--unicode --no-pcre2-unicode --pcre2-unicode -P|--pcre2 --no-pcre2 --auto-hybrid-regex "
        "--no-auto-hybrid-regex --binary --no-binary --block-buffered --line-buffered --include-zero "
        "--glob-case-insensitive --ignore-file-case-insensitive --one-file-system --max-columns-preview "
        "--no-context-separator --sort-files --no-sort-files -h|--help -V|--version --pcre2-version "
        "-A|--after-context= -B|--before-context= -C|--context= --color= --colors= --context-separator= "
        "-E|--encoding= --engine= -e|--regexp= -f|--file= --field-context-separator= "
        "--field-match-separator= -g|--glob= --iglob= --ignore-file= -M|--max-columns= -m|--max-count= "
        "--max-depth|--maxdepth= --max-filesize= --dfa-size-limit= --regex-size-limit= --path-separator= "
        "-r|--replace= --sort= --sortr= -j|--threads= -t|--type= -T|--type-not= --type-add= --type-clear="
    ),  # left out: --pre, --pre-glob (run a program per file), -z/--search-zip (runs decompressors),
    # --hostname-bin (runs a program)
    "diff": Grammar(
        "--normal -q|--brief -s|--report-identical-files -c -C= --context? -u -U= --unified? -e|--ed "
        "-n|--rcs -y|--side-by-side -W|--width= --left-column --suppress-common-lines -p|--show-c-function "
        "-F|--show-function-line= --label= -t|--expand-tabs -T|--initial-tab --tabsize= "
        "--suppress-blank-empty -r|--recursive --no-dereference -N|--new-file --unidirectional-new-file "
        "--ignore-file-name-case --no-ignore-file-name-case -x|--exclude= -X|--exclude-from= "
        "-S|--starting-file= --from-file= --to-file= -i|--ignore-case -E|--ignore-tab-expansion "
        "-Z|--ignore-trailing-space -b|--ignore-space-change -w|--ignore-all-space -B|--ignore-blank-lines "
        "-I|--ignore-matching-lines= -a|--text --strip-trailing-cr -D|--ifdef= -d|--minimal "
        "--horizon-lines= --speed-large-files --color? --palette= --help -v|--version"
    ),  # left out: -l/--paginate (runs pr)
    "cmp": Grammar(
        "-b|--print-bytes -i|--ignore-initial= -l|--verbose -n|--bytes= -s|--quiet|--silent --help -v|--version",
        max_operands=4,
    ),
    "md5sum": SUMS,
    "sha1sum": SUMS,
    "sha224sum": SUMS,
    "sha256sum": SUMS,
    "sha384sum": SUMS,
    "sha512sum": SUMS,
    "which": Grammar("-a -s", free=True),
    "type": Grammar("-a -f -p -P -t", free=True),
    "command": Grammar("-p -v -V", check=_asks_what),
    "whoami": Grammar("--help --version", max_operands=0),
    "id": Grammar(
        "-a -Z|--context -g|--group -G|--groups -n|--name -r|--real -u|--user -z|--zero --help --version",
        free=True,
    ),
    "uname": Grammar(
        "-a|--all -s|--kernel-name -n|--nodename -r|--kernel-release -v|--kernel-version -m|--machine "
        "-p|--processor -i|--hardware-platform -o|--operating-system --help --version",
        max_operands=0,
    ),
    "date": Grammar(
        "-d|--date= --debug -f|--file= -I? --iso-8601? --resolution -R|--rfc-email --rfc-3339= "
        "-r|--reference= -u|--utc|--universal --help --version",
        check=_date_formats,
    ),  # left out: -s/--set, and any operand but +FORMAT (date MMDDhhmm sets the clock)
    "printenv": Grammar("-0|--null --help --version", free=True),
    "env": Grammar(
        "-0|--null -i|--ignore-environment -u|--unset= -v|--debug --help --version", max_operands=0
    ),
    "column": Grammar(
        "-t|--table -n|--table-name= -O|--table-order= -N|--table-columns= -l|--table-columns-limit= "
        "-E|--table-noextreme= -d|--table-noheadings -e|--table-header-repeat -H|--table-hide= "
        "-R|--table-right= -T|--table-truncate= -W|--table-wrap= -L|--keep-empty-lines -J|--json "
        "-r|--tree= -i|--tree-id= -p|--tree-parent= -c|--output-width= -o|--output-separator= "
        "-s|--separator= -x|--fillrows -h|--help -V|--version",
        free=True,
    ),
    "git": Grammar(own=_git),
    "sed": Grammar(own=_sed),
    "find": Grammar(own=_find),
    "test": Grammar(own=_test),
    "[": Grammar(own=_test),
    "[[": Grammar(own=_test),
}
"""Not here, so always asked: ``ps`` (in the sandbox's own process namespace it would list only itself
and mislead), ``awk`` (a programming language: ``system()``, ``print > file``, pipes),
``less``/``more`` (commands of their own), ``xargs``/``env``/``timeout`` with a command (the command
is judged on its own), ``tee``, interpreters, and everything else."""
