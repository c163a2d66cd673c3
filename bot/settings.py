"""All configuration, from the environment and an optional .env file.

Every external base URL is a setting so tests can point the real SDK clients
at local fakes and users can point at Lark, GitHub Enterprise or a proxy.
Secrets are `SecretStr` so they never print in a repr, a log line or a reply.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- process --------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8080
    log_level: str = "INFO"
    log_json: bool = False
    data_dir: Path = Path(".copilot-data")  # embedded Redis data and other local state

    # --- redis ----------------------------------------------------------------------------
    redis_url: str | None = None  # unset: embedded redis-server (serve) or in-process (ask/chat)
    redis_prefix: str = "aic"
    session_ttl_seconds: int = 7 * 24 * 3600
    session_max_turns: int = 20
    session_max_bytes: int = 64_000
    clarification_ttl_seconds: int = 30 * 60
    dedupe_ttl_seconds: int = 9 * 3600  # Feishu retries for about 7 hours
    job_deadline_seconds: float = 300
    job_lease_seconds: float = 360  # longer than the job deadline, so only dead workers lose jobs
    job_max_deliveries: int = 3
    worker_concurrency: int = 4
    dead_letter_max_entries: int = 1000  # failed jobs kept for inspection, newest first
    dead_letter_max_age_seconds: int = 14 * 24 * 3600  # and never older than this

    # --- access and budgets -----------------------------------------------------------------
    allowed_workspaces: list[str] = Field(default_factory=list)
    allowed_channels: list[str] = Field(default_factory=list)
    allowed_users: list[str] = Field(default_factory=list)
    rate_limit_user_per_hour: int = 30
    rate_limit_channel_per_hour: int = 120
    daily_token_budget: int = 5_000_000  # shared by everyone
    user_daily_token_budget: int = 500_000  # one user's share of the model per day; 0 = no per-user cap
    metrics_token: SecretStr | None = None  # set: /metrics requires `Authorization: Bearer <token>`

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
    # --- knowledge index (python -m bot index / search) ----------------------------------------
    index_dir: Path | None = None  # unset: DATA_DIR/index
    index_check_seconds: float = 30.0  # how often a worker looks for a newer index generation
    index_min_score: float | None = None  # relevance threshold override (normalised score, 0..1)

    # --- issue download (`python -m bot sync --issues`, docs/issues-sync.md) ----------------------
    issues_page_size: int = Field(default=100, ge=1, le=100)  # both APIs cap per_page at 100
    issues_body_max_chars: int = 20_000  # longer bodies (pasted logs) are cut, with a marker
    issues_comment_max_chars: int = 4_000
    issues_max_comments: int = 5  # maintainer (GitHub) or last (GitCode) comments kept per closed issue
    issues_retries: int = 5  # attempts after a 5xx or a network error, with exponential backoff
    issues_max_wait_seconds: float = 900.0  # a longer rate-limit wait stops the repo; a rerun resumes
    issues_gitcode_min_interval_seconds: float = 1.2  # GitCode's default limit is said to be 50/min
    issues_http_timeout_seconds: float = 30.0
    issues_initial_since: str | None = None  # first sync only: skip issues not updated since (ISO date)

    # --- slack ------------------------------------------------------------------------------
    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None  # set: Socket Mode
    slack_api_url: str = "https://slack.com/api/"
    slack_require_mention_in_threads: bool = False
    slack_streaming: bool = True  # answers via chat.startStream/appendStream/stopStream; off: post + edit
    slack_post_interval_seconds: float = 1.0  # new messages per channel are paced (Slack allows ~1/s)

    # --- telegram ---------------------------------------------------------------------------
    telegram_bot_token: SecretStr | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_webhook_url: str | None = None  # unset: long polling
    telegram_api_url: str = "https://api.telegram.org/bot"

    # --- feishu / lark ----------------------------------------------------------------------
    feishu_app_id: str | None = None
    feishu_app_secret: SecretStr | None = None
    feishu_verification_token: SecretStr | None = None
    feishu_encrypt_key: SecretStr | None = None
    feishu_bot_open_id: str | None = None
    feishu_mode: Literal["webhook", "ws"] = "webhook"
    feishu_api_url: str = "https://open.feishu.cn"
    feishu_timestamp_window_seconds: int = 300  # our replay window on X-Lark-Request-Timestamp
    feishu_cardkit: bool = True  # stream into CardKit cards; false (or refused): patch interactive cards
    feishu_progress_interval_seconds: float = 0.5  # min seconds between two progress edits of one card

    # --- wecom ------------------------------------------------------------------------------
    wecom_token: SecretStr | None = None
    wecom_encoding_aes_key: SecretStr | None = None
    wecom_bot_id: str | None = None
    wecom_bot_secret: SecretStr | None = None
    wecom_mode: Literal["webhook", "ws"] = "webhook"
    wecom_api_url: str = "https://qyapi.weixin.qq.com"
    wecom_ws_url: str = "wss://openws.work.weixin.qq.com"
    wecom_receive_id: str = ""  # "" for an in-house AI bot; decrypted payloads must carry exactly this
    wecom_bot_name: str | None = None  # set: "@Name" is removed anywhere in group text; unset: a leading @token
    wecom_stream_window_seconds: float = 330.0  # WeCom stops refreshing 6 min after the message; keep a margin
    wecom_max_clock_skew_seconds: int = 300  # callback timestamp window; 0 disables the check
    wecom_ws_heartbeat_seconds: float = 30.0
    wecom_ws_reconnect_base_seconds: float = 1.0
    wecom_ws_reconnect_max_seconds: float = 30.0

    @property
    def index_path(self) -> Path:
        return self.index_dir if self.index_dir is not None else self.data_dir / "index"

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


def secret(value: SecretStr | None) -> str:
    """The plain value of an optional secret ('' when unset)."""
    return value.get_secret_value() if value is not None else ""
