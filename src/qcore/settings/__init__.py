"""Settings files: Qwen Code's locations, precedence, legacy keys and env substitution.

``load_settings(cwd)`` is the entry point; the pieces it chains (JSONC parsing, legacy keys, env
substitution, scope merging) are exported too, for tools that handle a single file.
"""

from qcore.settings.envsubst import substitute_env, substitute_string
from qcore.settings.jsonc import JsoncError, parse_jsonc, strip_jsonc
from qcore.settings.legacy import LEGACY_KEYS, migrate_legacy
from qcore.settings.loader import LoadedSettings, Scope, SettingsProblem, SettingsSource, load_settings
from qcore.settings.merge import MERGE_STRATEGIES, MergeStrategy, merge_settings
from qcore.settings.model import (
    ApprovalModeSetting,
    AuthSettings,
    CheckpointingSettings,
    ContextSettings,
    FileFilteringSettings,
    GeneralSettings,
    McpServerConfig,
    McpSettings,
    ModelSettings,
    PermissionsSettings,
    SecuritySettings,
    Settings,
    SettingsSection,
    ToolsSettings,
)
from qcore.settings.trust import FolderTrust, HeldBack, TrustedFolders, TrustLevel, trusted_folders_path

__all__ = [
    "LEGACY_KEYS",
    "MERGE_STRATEGIES",
    "ApprovalModeSetting",
    "AuthSettings",
    "CheckpointingSettings",
    "ContextSettings",
    "FileFilteringSettings",
    "FolderTrust",
    "GeneralSettings",
    "HeldBack",
    "JsoncError",
    "LoadedSettings",
    "McpServerConfig",
    "McpSettings",
    "MergeStrategy",
    "ModelSettings",
    "PermissionsSettings",
    "Scope",
    "SecuritySettings",
    "Settings",
    "SettingsProblem",
    "SettingsSection",
    "SettingsSource",
    "ToolsSettings",
    "TrustLevel",
    "TrustedFolders",
    "load_settings",
    "merge_settings",
    "migrate_legacy",
    "parse_jsonc",
    "strip_jsonc",
    "substitute_env",
    "substitute_string",
    "trusted_folders_path",
]
