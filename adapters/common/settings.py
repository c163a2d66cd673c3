"""The few settings every platform adapter reads (Redis key prefix, how long records live).

Each platform's settings model (adapters/<platform>/settings.py) inherits this one, with its
`.env` reading, and `bot.settings.Settings` inherits those: one `.env` configures everything, the
values are declared once, and an adapter itself only ever sees its own class's fields.
"""
from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class AdapterSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    redis_prefix: str = "aic"
    session_ttl_seconds: int = 7 * 24 * 3600
    clarification_ttl_seconds: int = 30 * 60
    dedupe_ttl_seconds: int = 9 * 3600  # Feishu retries for about 7 hours
    job_deadline_seconds: float = 300
