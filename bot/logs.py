"""Logging setup. Structured JSON when LOG_JSON is set; message text and secrets are never logged."""
from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar

# The job a log line belongs to. The worker sets it at the start of each job's task, so every line
# logged while answering (core, adapters, tools) carries the job id and conversation key.
job_context: ContextVar[dict[str, str]] = ContextVar("job_context", default={})


class JobContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in job_context.get().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class JsonFormatter(logging.Formatter):
    CONTEXT_FIELDS = ("job_id", "conversation", "platform", "event")

    def format(self, record: logging.LogRecord) -> str:
        data = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in self.CONTEXT_FIELDS:
            if hasattr(record, name):
                data[name] = getattr(record, name)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def configure_logging(level: str = "INFO", as_json: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if as_json else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(JobContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # HTTP client libraries log full URLs, which can carry tokens (Telegram puts the bot token in the path).
    for noisy in ("httpx", "httpx2", "httpcore", "telegram", "slack_sdk", "slack_bolt", "mcp", "anthropic", "lark_oapi"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
