"""All configuration, from the environment and an optional .env file.

Every external base URL is a setting so tests can point the real SDK clients
at local fakes and users can point at Lark, GitHub Enterprise or a proxy.
Secrets are `SecretStr` so they never print in a repr, a log line or a reply.

bot/ is the composition root: the research agent's and each platform's settings are models owned by
those packages, and this one inherits them all, so one environment (or .env) configures the bot.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from adapters.common.settings import AdapterSettings
from adapters.registry import platforms
from core.research.settings import ResearchSettings
from core.secrets import secret

__all__ = ["Settings", "secret", "settings_model"]


class Settings(ResearchSettings, *(p.settings for p in platforms()), AdapterSettings):  # type: ignore[misc]
    """Everything, composed: each part's fields live beside the code that uses them (core/research,
    adapters/<platform>/settings.py, one per entry of adapters/registry.py); this class adds what only
    the bot's processes read."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- process --------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8080
    log_level: str = "INFO"
    log_json: bool = False
    data_dir: Path = Path(".copilot-data")  # embedded Redis data and other local state

    # --- redis (key prefix and record lifetimes: adapters/common/settings.py) ------------------
    redis_url: str | None = None  # unset: embedded redis-server (serve) or in-process (ask/chat)
    session_max_turns: int = 20
    session_max_bytes: int = 64_000
    job_lease_seconds: float = 360  # longer than the job deadline, so only dead workers lose jobs
    job_max_deliveries: int = 3
    worker_concurrency: int = 4
    dead_letter_max_entries: int = 1000  # failed jobs kept for inspection, newest first
    dead_letter_max_age_seconds: int = 14 * 24 * 3600  # and never older than this

    # --- access and budgets -----------------------------------------------------------------
    allowed_workspaces: list[str] = Field(default_factory=list)
    allowed_channels: list[str] = Field(default_factory=list)
    allowed_users: list[str] = Field(default_factory=list)
    # Closed by default: serve/web/worker refuse to start while an enabled platform has no entry above that
    # applies to it, unless it is opened on purpose (bot/access_check.py, docs/security.md).
    allow_public: bool = False  # ALLOW_PUBLIC=1: every platform may run open
    allow_public_platforms: str = ""  # or some: telegram,slack (a JSON list works too)
    # who may `save as answer` in a thread (platform-qualified like the allowlists; empty: nobody)
    experts: list[str] = Field(default_factory=list)
    rate_limit_user_per_hour: int = 30
    rate_limit_channel_per_hour: int = 120
    daily_token_budget: int = 5_000_000  # shared by everyone
    user_daily_token_budget: int = 500_000  # one user's share of the model per day; 0 = no per-user cap
    # held on both budgets before each model answer and settled with its real usage after
    answer_token_reserve: int = Field(default=50_000, ge=0)
    metrics_token: SecretStr | None = None  # set: /metrics requires `Authorization: Bearer <token>`
    # HOST beyond loopback closes /readyz and /metrics unless METRICS_TOKEN is sent; true opens them to anyone
    metrics_public: bool = False

    # --- admin report: /admin and `python -m bot report` (bot/report, docs/operations.md#admin-report) ---
    admin_token: SecretStr | None = None  # the operator: every workspace's numbers, never a question's text
    admin_tokens: dict[str, SecretStr] = Field(default_factory=dict)  # {"slack:T1": "…"}: that workspace, texts too
    answer_log_days: int = Field(default=90, ge=1, le=366)  # how long each workspace's answer records live
    answer_log_max_entries: int = Field(default=50_000, ge=1)  # and how many one workspace keeps (newest)
    answer_log_limits: dict[str, dict[str, int]] = Field(default_factory=dict)  # {"slack:T1": {"days": 30, "entries": 5000}}
    digest_channels: dict[str, str] = Field(default_factory=dict)  # {"slack:T1": "C123"}: `bot digest` posts there

    # --- knowledge index (python -m bot index / search) ----------------------------------------
    index_dir: Path | None = None  # unset: DATA_DIR/index
    index_check_seconds: float = 30.0  # how often a worker looks for a newer index generation
    index_min_score: float | None = None  # relevance threshold override (normalised score, 0..1)

    # --- issue download (`python -m bot sync --issues`, docs/issues-sync.md) ----------------------
    issues_page_size: int = Field(default=100, ge=1, le=100)  # both APIs cap per_page at 100
    issues_body_max_chars: int = 20_000  # longer bodies (pasted logs) are cut, with a marker
    issues_comment_max_chars: int = 4_000
    issues_max_comments: int = 10  # last comments kept per issue (a maintainer's fix is kept over older chatter)
    issues_retries: int = 5  # attempts after a 5xx or a network error, with exponential backoff
    issues_max_wait_seconds: float = 900.0  # a longer rate-limit wait stops the repo; a rerun resumes
    issues_gitcode_min_interval_seconds: float = 1.2  # GitCode's default limit is said to be 50/min
    issues_http_timeout_seconds: float = 30.0
    issues_initial_since: str | None = None  # first sync only: skip issues not updated since (ISO date)
    # every N days a sync lists everything (no `since`) and drops the threads the host no longer lists
    issues_full_listing_days: float = Field(default=7.0, ge=0)
    # Maintainers where the host says nothing of roles (GitCode, imports), JSON by repository:
    # {"verylucky01/MindIE-LLM": ["login"], "*": ["login-for-all"]}; commenters active on 3+ threads
    # they did not open count too (core/resolution/extract.py).
    issues_maintainers: dict[str, list[str]] = Field(default_factory=dict)

    # --- escalation (`escalate` in a thread, core/escalate.py, docs/triage.md) -----------------------
    escalate_file_directly: bool = False  # file through the API with GITHUB_TOKEN / GITCODE_TOKEN, not a pre-filled link
    # workspaces whose escalated threads hear back: a maintainer's reply or a close that `sync --issues`
    # finds is posted once into the thread (platform:workspace, like ADMIN_TOKENS; bot/issues/followup.py)
    escalation_followup_workspaces: list[str] = Field(default_factory=list)

    def maintainers_for(self, repo: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*self.issues_maintainers.get("*", []), *self.issues_maintainers.get(repo, [])]))

    @property
    def index_path(self) -> Path:
        return self.index_dir if self.index_dir is not None else self.data_dir / "index"


def settings_model() -> type[Settings]:
    """`Settings`, widened by the settings model of any platform registered after it was composed (a test's
    fake platform): what the CLI loads, so every registered platform is configured from one environment."""
    missing = tuple(p.settings for p in platforms() if not issubclass(Settings, p.settings))
    return type("Settings", (*missing, Settings), {}) if missing else Settings
