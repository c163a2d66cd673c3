"""Logging setup. Structured JSON when LOG_JSON is set; message text and secrets are never logged."""
from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from contextvars import ContextVar

from adapters import registry

# The job a log line belongs to. The worker sets it at the start of each job's task, so every line
# logged while answering (core, adapters, tools) carries the job id and conversation key.
job_context: ContextVar[dict[str, str]] = ContextVar("job_context", default={})


class JobContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in job_context.get().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


class RedactingFilter(logging.Filter):
    """Runs every line (and its traceback) through the redactor: a token in an exception message or a
    URL logged by a library does not reach the log. Formats the message here, once, so the redactor
    sees the final text rather than the template."""

    def __init__(self, redact: Callable[[str], str]) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is the handler's to report, not a crash here
            message = str(record.msg)
        record.msg, record.args = self._redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._redact(logging.Formatter().formatException(record.exc_info))
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
            data["exc"] = record.exc_text or self.formatException(record.exc_info)  # exc_text: redacted
        return json.dumps(data, ensure_ascii=False)


def configure_logging(level: str = "INFO", as_json: bool = False, redact: Callable[[str], str] | None = None) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if as_json else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(JobContextFilter())
    if redact is not None:
        handler.addFilter(RedactingFilter(redact))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # uvicorn's own loggers log request lines (a Telegram webhook secret or a token in a query string):
    # no handlers of their own, so every line goes through the root handler and its redaction filter.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    # HTTP client libraries log full URLs, which can carry tokens (Telegram puts the bot token in the path);
    # each platform's registry entry names its SDKs' loggers.
    sdk_loggers = [name for platform in registry.platforms() for name in platform.sdk_loggers]
    for noisy in ("httpx", "httpx2", "httpcore", "mcp", "anthropic", *sdk_loggers):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
