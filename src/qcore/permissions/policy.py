"""Whether a call runs, is asked about, or is refused: rules first, then the approval mode.

Order of evaluation, the same for every tool:

1. a matching **deny** rule refuses the call, in every mode;
2. **plan** mode refuses anything that would change the world (read-only shell commands still run);
3. a matching **ask** rule puts the question, even in yolo mode;
4. a call with nothing to ask (a read-only tool) runs;
5. **yolo** runs everything else;
6. a change to a **protected** file (``.git/``, ``.qwen/settings.json``, a read-only file) is asked;
7. **allow** rules (settings, flags, "always" answers) and the built-in read-only shell commands run;
8. **auto-edit** runs file edits;
9. everything else is asked.

Any error while deciding refuses the call (``evaluate`` fails closed). With a shell deny rule in force, a
command whose name is only known when it runs is refused, and a line not fully understood is asked.

For a shell command, a rule covers one simple command: the line runs unasked only when every command in
it (including inside substitutions and ``bash -c``) is allowed, nothing is written by redirection, and
the parser understood all of it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from qcore.permissions import (
    subjects,  # a module, not its names: it imports the rule matchers from this package
)
from qcore.permissions.modes import ApprovalMode
from qcore.permissions.rules import (
    Rule,
    RuleKind,
    RuleSource,
    command_matches,
    shell_words,
    split_rule,
    tool_matches,
)
from qcore.shell.analysis import ShellAnalysis, SimpleCommand, WordKind, analyse
from qcore.shell.readonly import is_read_only_command
from qcore.shell.wrapper_table import RUNS_NOTHING_ELSE
from qcore.tools.base import MUTATOR_KINDS, AnyTool, Kind
from qcore.tools.confirmation import ConfirmationDetails, ToolConfirmationOutcome
from qcore.tools.names import tool_aliases

if TYPE_CHECKING:
    from qcore.permissions.subjects import Subject


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class PolicyDecision:
    verdict: Verdict
    reason: str = ""
    rule: Rule | None = None


@dataclass(frozen=True)
class CommandVerdict:
    """What the policy thinks of one simple command of a shell line, for the user to read."""

    text: str
    verdict: str
    """``read-only``, ``allowed``, ``denied`` or ``asks``."""
    detail: str = ""
    """The rule that decided, or why the command cannot be judged."""


@dataclass(frozen=True)
class ShellExplanation:
    commands: tuple[CommandVerdict, ...]
    writes: tuple[str, ...]
    """Files written by redirection."""
    problems: tuple[str, ...]
    """What the parser could not know before running (then the whole line is asked about)."""


PLAN_MODE_REFUSAL = (
    "Plan mode is active: only read-only tools run, and {tool} would change files or run commands. "
    "Do not try to make changes; finish exploring and present your plan to the user (with exit_plan_mode, "
    "where you have it, which asks the user to approve it)."
)

UNCONFINED_NOTE = "there is no sandbox here, so only one plain command or pipeline runs without a question"

Persist = Callable[[RuleSource, RuleKind, str], Path]
"""Saves a rule to the settings file of a scope and returns the file's path."""


def mode_that_allows(tool: AnyTool, details: ConfirmationDetails | None) -> ApprovalMode:
    """The least permissive mode in which this call would run unasked."""
    if details is not None and auto_edit_covers(tool, details) and not protected(details):
        return ApprovalMode.AUTO_EDIT
    return ApprovalMode.YOLO


def auto_edit_covers(tool: AnyTool, details: ConfirmationDetails) -> bool:
    """A change to files, which auto-edit mode lets run unasked unless it is ``protected``."""
    return details.type == "edit" or tool.kind is Kind.EDIT


def protected(details: ConfirmationDetails | None) -> str | None:
    """Why this change is asked about wherever edits would run unasked (a file that decides what runs,
    a read-only file); no rule or mode short of yolo covers it, so no "always" is offered."""
    return details.protection if details is not None and details.type == "edit" else None


def _may_run_denied(analysis: ShellAnalysis, deny_rules: list[Rule]) -> PolicyDecision | None:
    """Fail closed under deny rules: a command not known to run nothing else (a wrapper the table
    misses, an interpreter, a shell under another name, a builtin that evaluates text) is refused when
    one of its words names a denied program, and asked about (never allowed by a rule or a mode) when one
    is only known when it runs."""
    denied = {
        os.path.basename(words[0])
        for rule in deny_rules
        if rule.specifier and (words := shell_words(rule.specifier)[0])
    }
    if not denied:
        return None
    suspects = [
        command
        for command in analysis.commands
        if command.name not in RUNS_NOTHING_ELSE and not is_read_only_command(command)
    ]
    for command in suspects:
        for word in command.argv[1:]:
            named = denied & set(_TOKEN.findall(word))
            if named:
                return PolicyDecision(
                    Verdict.DENY,
                    f"deny rules exist for {sorted(named)[0]!r} and {command.name!r} may run it: its words "
                    f"name it ({word[:40]!r}).",
                )
    for command in suspects:
        for word, kind in zip(command.argv[1:], command.kinds[1:], strict=True):
            if kind in (WordKind.DYNAMIC, WordKind.PATTERN):
                return PolicyDecision(
                    Verdict.ASK,
                    f"deny rules exist and {command.name!r} may run another program, with a word only known "
                    f"when it runs ({word[:40]!r}), so no rule can be checked against what it runs.",
                )
    return None


_TOKEN = re.compile(r"[^\s/'\"`;|&()<>=,:{}\[\]$!*?]+")
"""The pieces of a word that could be a program's name (``/usr/bin/rm``, ``'rm -rf x'``, ``os.system('rm``)."""


def _names(tool: AnyTool) -> frozenset[str]:
    names = tool_aliases(tool)
    if tool.name == "run_shell_command":
        names |= {"shell", "bash", "shelltool"}
    if tool.name == "apply_patch":  # a patch adds and changes files: rules written for those apply to it
        names |= {"edit", "write_file", "writefile"}
    return frozenset(names)


@dataclass
class PermissionPolicy:
    mode: ApprovalMode = ApprovalMode.DEFAULT
    rules: list[Rule] = field(default_factory=list)
    root: Path = field(default_factory=Path.cwd)
    """The workspace root that relative path rules are read against."""
    shell_core: tuple[str, ...] | None = None
    """Legacy ``coreTools`` shell entries: when set, commands outside these prefixes are refused."""
    persist: Persist | None = None
    on_session_rule: Callable[[str, bool], None] | None = None
    """Told when a session rule is added (True) or revoked (False): the session's state keeps them."""

    # --- matching -----------------------------------------------------------------------------------

    def _rules(self, kind: RuleKind, tool: AnyTool) -> list[Rule]:
        names = _names(tool)
        return [rule for rule in self.rules if rule.kind is kind and tool_matches(rule.tool, names)]

    def _match(self, rules: list[Rule], subject: Subject | None) -> Rule | None:
        """The first of ``rules`` that reaches the call (for shell: any one of its commands)."""
        for rule in rules:
            spec = rule.specifier
            if spec is None or (subject is not None and subject.matches(spec, self.root)):
                return rule
        return None

    def _allowed(self, tool: AnyTool, subject: Subject | None) -> Rule | None:
        """The allow rule that covers the call, or None; a shell line is covered command by command."""
        rules = self._rules(RuleKind.ALLOW, tool)
        if subject is None:
            return next((rule for rule in rules if rule.specifier is None), None)
        if rules and subject.allowed_by([rule.specifier for rule in rules], self.root):
            return rules[0]
        return None

    def _command_rule(self, kind: RuleKind, tool: AnyTool, command: SimpleCommand) -> Rule | None:
        """The first rule of ``kind`` that covers this one simple command."""
        for rule in self._rules(kind, tool):
            if rule.specifier is None or command_matches(rule.specifier, command):
                return rule
        return None

    def _outside_core(self, analysis: ShellAnalysis) -> SimpleCommand | None:
        if self.shell_core is None:
            return None
        for command in analysis.commands:
            if not command.transparent and not any(
                command_matches(f"{prefix}:*", command) for prefix in self.shell_core
            ):
                return command
        return None

    # --- the decision -------------------------------------------------------------------------------

    def evaluate(
        self, tool: AnyTool, details: ConfirmationDetails | None, subject: Subject | None = None
    ) -> PolicyDecision:
        """The verdict for one call; an error while deciding refuses the call and says why."""
        try:
            return self._evaluate(tool, details, subject)
        except Exception as error:  # fail closed: a rule or subject that breaks never lets a call through
            return PolicyDecision(
                Verdict.DENY,
                f"{tool.name} is refused: its permission could not be decided ({type(error).__name__}: {error}).",
            )

    def _evaluate(
        self, tool: AnyTool, details: ConfirmationDetails | None, subject: Subject | None
    ) -> PolicyDecision:
        analysis = subject.analysis if isinstance(subject, subjects.ShellSubject) else None
        deny_rules = self._rules(RuleKind.DENY, tool)
        denied = self._match(deny_rules, subject)
        if denied is not None:
            return PolicyDecision(
                Verdict.DENY, f"{tool.name} is refused by the rule {denied.describe()}.", denied
            )
        if analysis is not None:
            refused = self._shell_refusal(analysis, deny_rules)
            if refused is not None:
                return refused

        if details is not None and details.type == "plan":
            return PolicyDecision(Verdict.ASK, "a plan is approved by the user, never by a rule or a mode")
        read_only_shell = subject is not None and subject.reads_only()
        changes_world = (details is not None or tool.kind in MUTATOR_KINDS) and not read_only_shell
        if self.mode is ApprovalMode.PLAN and changes_world:
            return PolicyDecision(Verdict.DENY, PLAN_MODE_REFUSAL.format(tool=tool.name))
        asked = self._match(self._rules(RuleKind.ASK, tool), subject)
        if asked is not None and details is not None:
            return PolicyDecision(Verdict.ASK, f"the rule {asked.describe()} asks first", asked)
        if details is None or read_only_shell:
            return PolicyDecision(Verdict.ALLOW, "read-only")
        if self.mode is ApprovalMode.YOLO:
            return PolicyDecision(Verdict.ALLOW, "yolo mode")
        protection = protected(details)
        if protection:
            return PolicyDecision(Verdict.ASK, f"{protection}; such changes are always asked about")
        allowed = self._allowed(tool, subject)
        if allowed is not None:
            reason = (
                "every command is allowed by a rule"
                if analysis is not None
                else f"allowed by {allowed.describe()}"
            )
            return PolicyDecision(Verdict.ALLOW, reason, allowed)
        if self.mode is ApprovalMode.AUTO_EDIT and auto_edit_covers(tool, details):
            return PolicyDecision(Verdict.ALLOW, "auto-edit mode")
        return PolicyDecision(Verdict.ASK)

    def _shell_refusal(self, analysis: ShellAnalysis, deny_rules: list[Rule]) -> PolicyDecision | None:
        """What deny rules (``deny_rules``: those that apply to the shell) and ``coreTools`` make of a
        line they cannot see all of."""
        outside = self._outside_core(analysis)
        if outside is not None:
            return PolicyDecision(
                Verdict.DENY,
                f"the command {outside.argv[0]!r} is not among the shell commands allowed by coreTools.",
            )
        if not deny_rules:
            return None
        hidden = next((c for c in analysis.commands if not c.literal_name), None)
        if hidden is not None:
            return PolicyDecision(
                Verdict.DENY,
                f"deny rules exist and the command name {hidden.argv[0]!r} is only known when it runs, "
                "so no rule can be checked against it.",
            )
        if not analysis.understood:
            return PolicyDecision(
                Verdict.ASK,
                "deny rules exist and this command cannot be fully read: " + "; ".join(analysis.problems),
            )
        return _may_run_denied(analysis, deny_rules)

    def explain_shell(self, tool: AnyTool, command: str, *, confined: bool = True) -> ShellExplanation:
        """Each simple command of ``command`` with its verdict, as a question shows them; ``confined``:
        a sandbox confines what runs unasked (without one, only plain lines do)."""
        analysis = analyse(command)
        verdicts: list[CommandVerdict] = []
        for simple in analysis.commands:
            if simple.transparent:
                continue
            text = simple.text if not simple.via else f"{simple.text}  (via {simple.via})"
            denied = self._command_rule(RuleKind.DENY, tool, simple)
            allowed = self._command_rule(RuleKind.ALLOW, tool, simple)
            if denied is not None:
                verdicts.append(CommandVerdict(text, "denied", denied.describe()))
            elif not simple.static:
                verdicts.append(CommandVerdict(text, "asks", "its words are only known when it runs"))
            elif is_read_only_command(simple):
                verdicts.append(CommandVerdict(text, "read-only"))
            elif allowed is not None:
                verdicts.append(CommandVerdict(text, "allowed", allowed.describe()))
            else:
                verdicts.append(CommandVerdict(text, "asks"))
        problems = list(analysis.problems)
        if not confined and not analysis.plain and not problems:
            problems.append(UNCONFINED_NOTE)
        return ShellExplanation(tuple(verdicts), tuple(analysis.writes), tuple(problems))

    # --- "always" -----------------------------------------------------------------------------------

    def suggest_rules(
        self, tool: AnyTool, outcome: ToolConfirmationOutcome, subject: Subject | None
    ) -> list[str]:
        """The exact rules an "always" answer would add, to show the user before anything is saved."""
        if subject is None:
            return [tool.name]
        server_wide = outcome is ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER
        if not server_wide and (choices := self.rule_choices(tool, subject)):
            return list(choices[0])
        return subject.suggest(tool.name, server_wide=server_wide)

    def rule_choices(self, tool: AnyTool, subject: Subject | None) -> list[tuple[str, ...]]:
        """The sets of rules an "always" answer could save, narrowest first (the first is suggested, the
        others are offered one key away); from the subject's ``choices`` where it has them."""
        choose = getattr(subject, "choices", None)
        if subject is None or choose is None:
            return []
        return [tuple(rules) for rules in choose(tool.name, self.root)]

    def remember(self, rules: list[str], source: RuleSource = RuleSource.SESSION) -> list[Rule]:
        """Add allow rules for the session, or save them to the project or user settings."""
        added: list[Rule] = []
        for pattern in rules:
            split_rule(pattern)  # refuse malformed rules before saving anything
            path: Path | None = None
            if source in (RuleSource.PROJECT, RuleSource.USER):
                if self.persist is None:
                    raise RuntimeError("this session cannot save rules to settings files")
                path = self.persist(source, RuleKind.ALLOW, pattern)
            rule = Rule(RuleKind.ALLOW, pattern, source, path)
            if rule not in self.rules:
                self.rules.append(rule)
                added.append(rule)
                if source is RuleSource.SESSION and self.on_session_rule is not None:
                    self.on_session_rule(pattern, True)
        return added

    def forbid(self, rules: list[str]) -> list[Rule]:
        """Deny rules for this session only (a "reject always" answer); shown by ``active_rules`` and
        revocable like any other, never saved."""
        added: list[Rule] = []
        for pattern in rules:
            split_rule(pattern)
            rule = Rule(RuleKind.DENY, pattern, RuleSource.SESSION)
            if rule not in self.rules:
                self.rules.append(rule)
                added.append(rule)
        return added

    def active_rules(self) -> list[Rule]:
        return list(self.rules)

    def revoke(self, rule: Rule, remove_from_file: Callable[[Rule], None] | None = None) -> bool:
        """Stop applying ``rule``; a rule from a settings file is also removed there when a remover is given."""
        if rule not in self.rules:
            return False
        if rule.path is not None and remove_from_file is not None:
            remove_from_file(rule)
        self.rules.remove(rule)
        saved = rule.source is RuleSource.SESSION and rule.kind is RuleKind.ALLOW  # session denials are not
        if saved and self.on_session_rule is not None:
            self.on_session_rule(rule.pattern, False)
        return True

    def unattended_refusal(
        self, tool: AnyTool, details: ConfirmationDetails | None, subject: Subject | None = None
    ) -> str:
        """Why a call that needs a question is refused when nobody can answer, and what would allow it
        (the front end says how to get there in its own terms, from ``unattended_remedy``)."""
        if details is not None and details.type == "plan":
            return (
                f'"{tool.name}" needs the user to approve the plan, and this session cannot ask '
                f"(non-interactive); the approval mode stays {self.mode.value}. Give the plan as your answer "
                "instead, and do not call it again."
            )
        mode, rules, ask_rule = self.unattended_remedy(tool, details, subject)
        if ask_rule:
            return (
                f'Permission to run "{tool.name}" was not granted: the rule {ask_rule} asks first, in every '
                "approval mode and over allow rules, and this session cannot ask (non-interactive). Remove or "
                "narrow that rule to let such calls run unattended."
            )
        modes = "auto-edit or yolo" if mode is ApprovalMode.AUTO_EDIT else "yolo"
        listed = ", ".join(f'"{rule}"' for rule in rules)
        why = f" ({protected(details)})" if protected(details) else ""
        remedy = f", or with the rule {listed} in permissions.allow in settings" if rules else ""
        if not rules and subject is not None and (reason := subject.uncoverable()):
            remedy = f"; no allow rule can cover it: {reason}"
        return (
            f'Permission to run "{tool.name}" was not granted: it needs approval{why} and this session cannot '
            f"ask (non-interactive, approval mode {self.mode.value}). It would run in approval mode {modes}"
            f"{remedy}."
        )

    def unattended_remedy(
        self, tool: AnyTool, details: ConfirmationDetails | None, subject: Subject | None = None
    ) -> tuple[ApprovalMode, tuple[str, ...], str]:
        """The least permissive mode that runs the call unasked, the allow rules that would cover it, and
        the ask rule (described) that puts the question whatever the mode and rules, if one matches."""
        if details is not None and details.type == "plan":
            return self.mode, (), ""  # only the user approves a plan
        asked = self._match(self._rules(RuleKind.ASK, tool), subject) if details is not None else None
        ask_rule = asked.describe() if asked is not None else ""
        if protected(details):
            return ApprovalMode.YOLO, (), ask_rule
        rules = self.suggest_rules(tool, ToolConfirmationOutcome.PROCEED_ALWAYS, subject)
        if not rules and (subject is None or subject.uncoverable() is None):
            rules = [tool.name]
        return mode_that_allows(tool, details), tuple(rules), ask_rule
