"""``git`` that only reads: global options, then one subcommand from a list, each with the exact options
known to only read (in the syntax of ``qcore.shell.options``).

Left out on purpose: ``-C`` (another folder may hold an embedded bare repository whose settings run
programs: ``git -C evil.git diff`` runs its ``diff.external``), ``-c``/``--config-env`` (a setting can name a program: ``core.pager``,
``diff.external``, an alias), ``--git-dir``/``--work-tree``/``--exec-path`` (another repository's
configuration, other git programs), ``-p``/``--paginate``; in subcommands ``--output`` (writes a file),
``--ext-diff``/``--textconv`` (run configured programs), ``git grep -O`` (runs a pager command), and
every form of ``branch``, ``tag``, ``remote``, ``config``, ``stash``, ``worktree`` and ``reflog`` that
changes something.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from qcore.shell.options import Parsed, parse

GLOBAL = (
    "-P|--no-pager --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
    "--icase-pathspecs --no-replace-objects --version"
)
END = " --end-of-options"

REVISIONS = (
    "--all --branches? --tags? --remotes? --glob= --exclude= --first-parent --merges --no-merges "
    "--min-parents= --max-parents= --no-min-parents --no-max-parents --reverse --topo-order --date-order "
    "--author-date-order --left-right --left-only --right-only --cherry-pick --cherry-mark --cherry "
    "--boundary --ancestry-path? --full-history --simplify-merges --simplify-by-decoration --dense --sparse "
    "--show-pulls --not --walk-reflogs|-g --no-walk? --do-walk --graph --oneline --abbrev-commit "
    "--no-abbrev-commit --decorate? --no-decorate --decorate-refs= --decorate-refs-exclude= --source "
    "--use-mailmap --mailmap --no-mailmap --full-diff --log-size --follow --relative-date --parents "
    "--children --regexp-ignore-case|-i --basic-regexp --extended-regexp|-E --fixed-strings|-F "
    "--perl-regexp --all-match --invert-grep --remove-empty --count --no-notes --notes? --show-notes? "
    "-n|--max-count= --skip= --since= --after= --until= --before= "
    "--since-as-filter= --author= --committer= --grep= --grep-reflog= --format= --pretty? --date= "
    "--encoding= --expand-tabs? --no-expand-tabs -L= --single-worktree --exclude-first-parent-only "
    "--reflog --clear-decorations -z --color? --no-color"
)
"""Revision walking and log formatting (``git log``, ``show``, ``shortlog``, ``rev-list``)."""

DIFF = (
    "-p|-u|--patch -s|--no-patch --raw --patch-with-raw --patch-with-stat --stat? --compact-summary "
    "--numstat --shortstat --dirstat? -X? --cumulative --dirstat-by-file? --summary --name-only "
    "--name-status --submodule? --color? --no-color --color-moved? --no-color-moved --color-moved-ws= "
    "--no-color-moved-ws --word-diff? --word-diff-regex= --color-words? --no-renames --rename-empty "
    "--no-rename-empty --check --full-index --binary --abbrev? -B?|--break-rewrites? -M?|--find-renames? "
    "-C?|--find-copies? --find-copies-harder -D|--irreversible-delete -l? --diff-filter= -S= -G= "
    "--find-object= --pickaxe-all --pickaxe-regex -O= --skip-to= --rotate-to= -R --relative? "
    "--no-relative -a|--text --ignore-cr-at-eol --ignore-space-at-eol -b|--ignore-space-change "
    "-w|--ignore-all-space --ignore-blank-lines -I|--ignore-matching-lines= --inter-hunk-context= "
    "-W|--function-context --exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules? "
    "--src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= --ita-invisible-in-index "
    "--ita-visible-in-index -U?|--unified? --output-indicator-new= --output-indicator-old= "
    "--output-indicator-context= --minimal --patience --histogram --anchored= --diff-algorithm= "
    "--indent-heuristic --no-indent-heuristic -z --stat-width= --stat-name-width= --stat-graph-width= "
    "--stat-count= -m -c --cc --dd --remerge-diff --diff-merges= --no-diff-merges --combined-all-paths "
    "--no-stat -0 -1 -2 -3 --base --ours --theirs"
)
"""Diff output options shared by ``diff``, ``log``, ``show``."""


def _operands_need(*options: str) -> Callable[[Parsed, Sequence[str]], bool]:
    """Operands (names) are allowed only in a listing form: ``branch --list <pattern>``."""

    def check(parsed: Parsed, words: Sequence[str]) -> bool:
        return not parsed.operands or parsed.has(*options)

    return check


def _remote(parsed: Parsed, words: Sequence[str]) -> bool:
    operands = [words[i] for i in parsed.operands]
    return not operands or (operands[0] == "get-url" and len(operands) == 2)


def _reflog(parsed: Parsed, words: Sequence[str]) -> bool:
    operands = [words[i] for i in parsed.operands]
    return not operands or operands[0] not in ("expire", "delete", "drop", "write")


def _config(parsed: Parsed, words: Sequence[str]) -> bool:
    reading = parsed.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l")
    return reading and len(parsed.operands) <= 2


def _only(*first: str) -> Callable[[Parsed, Sequence[str]], bool]:
    """The first operand must be one of ``first`` (``stash list``, ``worktree list``)."""

    def check(parsed: Parsed, words: Sequence[str]) -> bool:
        return bool(parsed.operands) and words[parsed.operands[0]] in first

    return check


Check = Callable[[Parsed, Sequence[str]], bool]

SUBCOMMANDS: dict[str, tuple[str, Check | None]] = {
    "status": (
        "-s|--short -b|--branch --show-stash --porcelain? --long -v|--verbose -u?|--untracked-files? "
        "--ignored? --ignore-submodules? -z --column? --no-column --ahead-behind --no-ahead-behind --renames "
        "--no-renames --find-renames?",
        None,
    ),
    "diff": (DIFF + " --cached --staged --no-index --merge-base", None),
    "log": (REVISIONS + " " + DIFF, None),
    "show": (REVISIONS + " " + DIFF, None),
    "whatchanged": (REVISIONS + " " + DIFF, None),
    "rev-list": (REVISIONS + " --objects --objects-edge --header --timestamp --left-right --bisect", None),
    "shortlog": (REVISIONS + " -n|--numbered -s|--summary -e|--email --group= -c|--committer -w?", None),
    "blame": (
        "-b --root --show-stats -L= -l -t -S= --reverse= --first-parent -p|--porcelain --line-porcelain "
        "--incremental --encoding= --contents= --date= --progress --no-progress -M? -C? --ignore-rev= "
        "--ignore-revs-file= --color-lines --color-by-age -e|--show-email -w -s -f|--show-name "
        "-n|--show-number -c --abbrev? --score-debug --minimal",
        None,
    ),
    "ls-files": (
        "-c|--cached -d|--deleted -m|--modified -o|--others -i|--ignored -s|--stage -u|--unmerged "
        "-k|--killed --directory --no-empty-directory -z -t -v -f --full-name --recurse-submodules --abbrev? "
        "-x|--exclude= -X|--exclude-from= --exclude-per-directory= --exclude-standard --error-unmatch "
        "--with-tree= --eol --deduplicate --sparse --format= --resolve-undo",
        None,
    ),
    "ls-tree": (
        "-d -r -t -l|--long -z --name-only|--name-status --object-only --full-name --full-tree --abbrev? "
        "--format=",
        None,
    ),
    "rev-parse": (
        "--abbrev-ref? --short? --verify -q|--quiet --symbolic --symbolic-full-name --show-toplevel "
        "--show-prefix --show-cdup --git-dir --git-common-dir --absolute-git-dir --is-inside-work-tree "
        "--is-inside-git-dir --is-bare-repository --is-shallow-repository --show-superproject-working-tree "
        "--all --branches? --tags? --remotes? --glob= --exclude= --default= --revs-only --no-revs --flags "
        "--no-flags --sq --sq-quote --not --local-env-vars --path-format= --git-path= --show-object-format? "
        "--since= --until= --after= --before= --disambiguate= --shared-index-path --prefix=",
        None,
    ),
    "describe": (
        "--all --tags --contains --abbrev? --candidates= --exact-match --debug --long --match= --exclude= "
        "--always --first-parent --dirty? --broken?",
        None,
    ),
    "cat-file": (
        "-t -s -p -e --batch? --batch-check? --batch-command? --batch-all-objects --buffer --unordered "
        "--follow-symlinks --allow-unknown-type -Z --use-mailmap --mailmap --no-mailmap",
        None,
    ),
    "grep": (
        "-i|--ignore-case -I -w|--word-regexp -v|--invert-match -h -H --full-name -E|--extended-regexp "
        "-G|--basic-regexp -P|--perl-regexp -F|--fixed-strings -n|--line-number --column "
        "-l|--files-with-matches|--name-only -L|--files-without-match -z|--null -o|--only-matching "
        "-c|--count --color? --no-color --break --heading -p|--show-function -W|--function-context "
        "-A|--after-context= -B|--before-context= -C|--context= --threads= -f= -e= --and --or --not "
        "--all-match -q|--quiet --cached --no-index --untracked --index --recurse-submodules --max-depth= "
        "-r|--recursive --no-recursive --exclude-standard --no-exclude-standard -a|--text --no-textconv "
        "-m|--max-count=",
        None,
    ),
    "merge-base": ("--octopus --independent --is-ancestor --fork-point -a|--all", None),
    "show-ref": (
        "--head --heads --branches --tags -d|--dereference -s|--hash? --verify --abbrev? -q|--quiet --exists",
        None,
    ),
    "for-each-ref": (
        "--count= --shell --perl --python --tcl --sort= --format= --color? --points-at= --merged~ "
        "--no-merged~ --contains~ --no-contains~ --ignore-case --omit-empty --exclude=",
        None,
    ),
    "branch": (
        "-a|--all -r|--remotes -v|--verbose -l|--list --show-current --contains~ --no-contains~ --merged~ "
        "--no-merged~ --points-at= --sort= --format= --color? --no-color --column? --no-column "
        "-i|--ignore-case --abbrev? --no-abbrev --omit-empty -q|--quiet",
        _operands_need("-l"),
    ),
    "tag": (
        "-l|--list -n? --contains~ --no-contains~ --merged~ --no-merged~ --points-at= --sort= --format= "
        "--color? --column? --no-column -i|--ignore-case --omit-empty",
        _operands_need("-l"),
    ),
    "remote": ("-v|--verbose --push --all", _remote),
    "config": (
        "--get --get-all --get-regexp --get-urlmatch -l|--list --global --system --local --worktree "
        "--show-origin --show-scope -z|--null --name-only --type= --bool --int --bool-or-int --path "
        "--expiry-date --default= --includes --no-includes",
        _config,
    ),
    "stash": (REVISIONS, _only("list")),
    "worktree": ("--porcelain -v|--verbose -z", _only("list")),
    "reflog": (REVISIONS, _reflog),
    "check-ignore": ("-q|--quiet -v|--verbose -n|--non-matching --no-index -z --stdin", None),
    "count-objects": ("-v|--verbose -H|--human-readable", None),
    "name-rev": (
        "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always",
        None,
    ),
    "version": ("--build-options", None),
}


def git_reads_only(words: Sequence[str]) -> bool:
    """``words`` are git's arguments (without ``git``), all literal."""
    front = parse(words, GLOBAL, permute=False, dash_values=False)
    if front.error:
        return False
    if front.rest is None:
        return front.has("--version") and len(front.options) == 1
    subcommand, rest = words[front.rest], words[front.rest + 1 :]
    entry = SUBCOMMANDS.get(subcommand)
    if entry is None:
        return False
    table, check = entry
    numbers = subcommand in ("log", "show", "whatchanged", "rev-list", "shortlog", "grep", "stash", "reflog")
    parsed = parse(rest, table + END, numbers=numbers, dash_values=False)
    if parsed.error or not _submodules_stay_closed(parsed):
        return False
    return check is None or check(parsed, rest)


SUBMODULE_VALUES = {"--ignore-submodules": ("all", "dirty"), "--submodule": ("short", "log")}
"""The values that keep git out of a submodule's working tree: ``--ignore-submodules=none`` or
``untracked`` runs the submodule's own clean filter, ``--submodule=diff`` its ``diff.external``, and a
submodule's configuration is not the repository's (qcli's guards do not reach it). A bare
``--ignore-submodules`` means ``all``, a bare ``--submodule`` means ``log``."""


def _submodules_stay_closed(parsed: Parsed) -> bool:
    return all(
        option.value is None or option.value in SUBMODULE_VALUES[option.name]
        for option in parsed.options
        if option.name in SUBMODULE_VALUES
    )
