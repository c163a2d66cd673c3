"""The research agent's settings (model provider, tools, their endpoints and caches).

Owned here, where they are used; `bot.settings.Settings` inherits this model.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.secrets import secret


class ResearchSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- model (research agent) -------------------------------------------------------------
    # unset: anthropic when ANTHROPIC_API_KEY is set, else openai when OPENAI_API_KEY or OPENAI_BASE_URL is
    model_provider: Literal["anthropic", "openai"] | None = None
    model_tools: Literal["auto", "on", "off"] = "auto"  # off/unsupported: retrieval-augmented answers
    openai_api_key: SecretStr | None = None  # may be empty for a self-hosted server
    openai_base_url: str | None = None  # e.g. http://npu-host:8000/v1 for vllm-ascend; unset: api.openai.com
    openai_model: str | None = None  # unset: the first model the server lists (a self-hosted server has one)
    openai_max_tokens: int = 8192
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None  # SDK default when unset
    anthropic_model: str = "claude-sonnet-5"
    research_max_steps: int = 8
    research_deadline_seconds: float = 120.0
    tool_timeout_seconds: float = 30.0
    tool_output_max_bytes: int = 12_000

    # --- research tools ---------------------------------------------------------------------
    deepwiki_mcp_url: str = "https://mcp.deepwiki.com/mcp"
    github_api_url: str = "https://api.github.com"
    github_token: SecretStr | None = None
    gitcode_api_url: str = "https://api.gitcode.com/api/v5"
    gitcode_token: SecretStr | None = None
    repos_dir: Path = Path("repos")  # local clones as REPOS_DIR/<owner>/<repo>
    cache_ttl_deepwiki_seconds: int = 24 * 3600
    cache_ttl_issues_seconds: int = 3600
    cache_ttl_code_seconds: int = 600
    anthropic_max_tokens: int = 16000  # covers adaptive thinking plus the answer
    anthropic_max_retries: int = 2  # the SDK's own retries for 429/5xx/529
    anthropic_stream: bool = True
    deepwiki_timeout_seconds: float = 90.0  # DeepWiki answers take tens of seconds
    # clone URL per canonical repo (JSON object), e.g. {"vllm-project/vllm-ascend": "file:///srv/mirror.git"}
    repo_urls: dict[str, str] = Field(default_factory=dict)
    repo_sync_mode: Literal["shallow", "blobless"] = "shallow"
    repo_sync_timeout_seconds: float = 900.0
    # newest release tags a shallow sync fetches (depth 1) so answers can read at the user's release; 0: none
    sync_release_tags: int = Field(100, ge=0, le=1000)
    release_indexes_kept: int = Field(4, ge=1, le=100)  # per repository: small per-tag indexes kept under INDEX_DIR/releases

    @property
    def resolved_model_provider(self) -> Literal["anthropic", "openai"] | None:
        """The provider the research agent talks to, or None when no model is configured."""
        if self.model_provider is not None:
            return self.model_provider
        if secret(self.anthropic_api_key):
            return "anthropic"
        if secret(self.openai_api_key) or self.openai_base_url:
            return "openai"
        return None

    @property
    def llm_enabled(self) -> bool:
        return self.resolved_model_provider is not None
