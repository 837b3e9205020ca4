"""The typed view of the settings qcore reads; everything else is kept, untyped, as model extra.

Attributes are snake_case; the camelCase spelling of the files is the alias (both are accepted).
Every section defaults to its empty value so ``Settings()`` is a complete, usable configuration.
Validation is pydantic's lax mode on purpose: env substitution only produces strings, so
``"timeout": "${MCP_TIMEOUT}"`` must still become an int.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

__all__ = [
    "ApprovalModeSetting",
    "AuthSettings",
    "CheckpointingSettings",
    "CodeInterpreterSettings",
    "ContextSettings",
    "FileFilteringSettings",
    "FolderTrustSettings",
    "GeneralSettings",
    "McpServerConfig",
    "McpSettings",
    "ModelSettings",
    "PermissionsSettings",
    "SecuritySettings",
    "Settings",
    "SettingsSection",
    "ToolsSettings",
    "WebFetchSettings",
    "WebSearchProviderConfig",
    "WebSearchSettings",
]

ApprovalModeSetting = Literal["plan", "default", "auto-edit", "yolo"]


def _env_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


def _stringify_scalars(value: Any) -> Any:
    """Environment values end up as strings anyway; accept ``"PORT": 8080`` and ``true`` as written."""
    return {key: _env_text(item) for key, item in value.items()} if isinstance(value, dict) else value


EnvMapping = Annotated[dict[str, str], BeforeValidator(_stringify_scalars)]


class SettingsSection(BaseModel):
    """Shared config: camelCase aliases, names accepted too, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True
    )


class ChatCompressionSettings(SettingsSection):
    context_percentage_threshold: float = Field(default=0.7, gt=0, le=1)
    """Compress older turns when a request would take more than this share of the context window."""


class ModelSettings(SettingsSection):
    name: str | None = None
    max_session_turns: int = Field(default=-1, ge=-1)
    """-1 means unlimited."""
    generation_config: dict[str, Any] | None = None
    chat_compression: ChatCompressionSettings = Field(default_factory=ChatCompressionSettings)
    max_tool_calls_per_turn: int | None = None
    """Tool calls one turn may make; unset: stop a turn past 100 calls once it repeats itself, and at 1000;
    0 or less: no limit."""
    skip_loop_detection: bool = False
    """Turn off the repeated-call checks (not the per-turn budget)."""

    @property
    def context_window_size(self) -> int | None:
        """``generationConfig.contextWindowSize``: the model's window in tokens, when the user set one."""
        value = (self.generation_config or {}).get("contextWindowSize")
        try:
            size = int(value) if isinstance(value, int | str) and not isinstance(value, bool) else 0
        except ValueError:
            return None
        return size if size > 0 else None


class AuthSettings(SettingsSection):
    selected_type: str | None = None
    api_key: str | None = None
    base_url: str | None = None


class FolderTrustSettings(SettingsSection):
    enabled: bool = True
    """On by default (Qwen Code's default is off); read from the user and system scopes only."""


class SecuritySettings(SettingsSection):
    auth: AuthSettings = Field(default_factory=AuthSettings)
    folder_trust: FolderTrustSettings = Field(default_factory=FolderTrustSettings)


class WebFetchSettings(SettingsSection):
    allow_private_addresses: bool = False
    """Let web_fetch reach loopback, private, link-local and unspecified addresses (off: SSRF guard)."""


class CodeInterpreterSettings(SettingsSection):
    timeout_ms: int = Field(default=120_000, gt=0)
    """A cell running longer is interrupted; the kernel and its variables stay."""
    warm: bool = False
    """Start the kernel with the session instead of on the first call."""
    python: str | None = None
    """The interpreter the kernel runs (it needs ipykernel), e.g. ``.venv/bin/python``; relative paths are
    read from the workspace root. None: qcli's own Python."""
    kernel_spec: str | None = None
    """An installed Jupyter kernel spec to use instead (``jupyter kernelspec list``)."""


class ToolsSettings(SettingsSection):
    core: list[str] | None = None
    """Allowlist of built-in tools; None means all of them."""
    exclude: list[str] = []
    allowed: list[str] = []
    """Tools (or ``run_shell_command(prefix)`` patterns) that run without confirmation."""
    approval_mode: ApprovalModeSetting | None = None
    discovery_command: str | None = None
    call_command: str | None = None
    discovery_timeout_ms: int = Field(default=30_000, gt=0)
    call_timeout_ms: int = Field(default=120_000, gt=0)
    use_ripgrep: bool = True
    enable_tool_output_truncation: bool = True
    truncate_tool_output_threshold: int = 25_000
    """Characters; zero or less means no limit."""
    truncate_tool_output_lines: int = 1_000
    web_fetch: WebFetchSettings = Field(default_factory=WebFetchSettings)
    code_interpreter: CodeInterpreterSettings = Field(default_factory=CodeInterpreterSettings)
    env_passthrough: list[str] = []
    """Credential variables qcli withholds from the processes its tools start (``OPENAI_API_KEY`` and the
    like: ``qcore.execution.credentials``) that are passed to them all the same."""
    sandbox: bool | str = False
    """Confine every approved shell command (writes only in the workspace and temp folders); where no
    sandbox can run, such commands are refused rather than run unconfined. Qwen Code also takes a
    sandbox's name (docker, podman, sandbox-exec); any name turns on the one qcore has, bubblewrap.
    Commands that run unasked because they are read-only are confined whatever this says."""


class McpServerConfig(SettingsSection):
    command: str | None = None
    args: list[str] = []
    env: EnvMapping = {}
    cwd: str | None = None
    url: str | None = None
    """SSE transport."""
    http_url: str | None = None
    """Streamable-HTTP transport."""
    headers: dict[str, str] = {}
    timeout: int | None = Field(default=None, gt=0)
    """Milliseconds."""
    trust: bool = False
    include_tools: list[str] | None = None
    exclude_tools: list[str] | None = None
    description: str | None = None


class McpSettings(SettingsSection):
    server_command: str | None = None
    allowed: list[str] | None = None
    excluded: list[str] | None = None
    startup_wait_ms: int = Field(default=5_000, ge=0)
    """How long the first request waits, in all, for servers still connecting; later ones join a later
    request (each server's own ``timeout`` still bounds its connection)."""


class FileFilteringSettings(SettingsSection):
    respect_git_ignore: bool = True
    respect_qwen_ignore: bool = True


_CONTEXT_FILE_NAME = "QWEN.md"


def _name_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


class ContextSettings(SettingsSection):
    file_name: str | list[str] = _CONTEXT_FILE_NAME
    """The context file names (``QWEN.md``): looked up in the workspace, and in ``~/.qwen`` unless a
    project that is not trusted set them (``home_file_names``)."""
    include_directories: list[str] = []
    file_filtering: FileFilteringSettings = Field(default_factory=FileFilteringSettings)
    _home_file_name: str | list[str] | None = PrivateAttr(default=None)

    @property
    def file_names(self) -> list[str]:
        """The names looked up from the workspace root down to the current folder."""
        return _name_list(self.file_name)

    @property
    def home_file_names(self) -> list[str]:
        """The names looked up in ``~/.qwen`` (and the global memory file): the user's own."""
        return _name_list(self.file_name if self._home_file_name is None else self._home_file_name)

    def keep_in_workspace(self, users: str | list[str] | None) -> None:
        """``file_name`` came from a project that is not trusted: it names files in that project only,
        never in the user's ``~/.qwen`` (their settings and credentials sit beside ``QWEN.md``). ``users``
        is what the user's own settings say (None: the default)."""
        self._home_file_name = _CONTEXT_FILE_NAME if users is None else users


class PermissionsSettings(SettingsSection):
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class CheckpointingSettings(SettingsSection):
    enabled: bool = True
    """Snapshots before each turn's first change, for ``/undo`` and ``/rewind`` (Qwen Code's default is
    off; ours is on, since they cost a fraction of a second and save work)."""


class GeneralSettings(SettingsSection):
    preferred_editor: str | None = None
    checkpointing: CheckpointingSettings = Field(default_factory=CheckpointingSettings)


class WebSearchProviderConfig(SettingsSection):
    type: str
    """Provider kind; qcore implements "tavily" (others are kept but not used)."""
    api_key: str | None = None
    base_url: str | None = None
    """A Tavily-compatible endpoint; None means the public Tavily API."""


class WebSearchSettings(SettingsSection):
    provider: list[WebSearchProviderConfig] = []
    default: str | None = None
    """The ``type`` to use when several providers are configured."""


class ModelProvider(SettingsSection):
    """One entry of Qwen Code's ``modelProviders.<provider>`` list: a model ``/model`` can switch to."""

    id: str
    name: str | None = None
    description: str | None = None
    base_url: str | None = None
    env_key: str | None = None
    """The environment variable holding this endpoint's key (never the key itself)."""
    generation_config: dict[str, Any] | None = None


class Settings(SettingsSection):
    """All settings qcore reads, after the scopes are merged."""

    model: ModelSettings = Field(default_factory=ModelSettings)
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    mcp_servers: dict[str, McpServerConfig] = {}
    mcp: McpSettings = Field(default_factory=McpSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    general: GeneralSettings = Field(default_factory=GeneralSettings)
    web_search: WebSearchSettings = Field(default_factory=WebSearchSettings)
    env: EnvMapping = {}
    model_providers: dict[str, Any] = {}
    """Qwen Code's ``modelProviders``: the models ``/model`` offers, by provider, each a list of
    ``ModelProvider`` entries; read entry by entry (``qcore.agent.models``), so one malformed entry, or the
    older wrapped shape, costs only itself."""
