"""Log lines go through the same redactor as tool output: tokens in messages, arguments and tracebacks."""
from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from bot.logs import configure_logging
from core.research.redact import Redactor

TELEGRAM = "1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
CONFIGURED = "configured-Secret-Value-42"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """configure_logging changes process-global state (root handlers, quieter HTTP loggers): put it back,
    or later tests that capture DEBUG lines from those loggers see nothing."""
    root = logging.getLogger()
    saved = (root.level, root.handlers[:])
    names = [n for n in logging.root.manager.loggerDict if isinstance(logging.root.manager.loggerDict[n], logging.Logger)]
    levels = {n: logging.getLogger(n).level for n in names}
    try:
        yield
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        for name in set(logging.root.manager.loggerDict) - set(levels):
            logger = logging.root.manager.loggerDict[name]
            if isinstance(logger, logging.Logger):
                logger.setLevel(logging.NOTSET)


@pytest.mark.parametrize("as_json", [False, True])
def test_tokens_do_not_reach_a_log_line(as_json: bool, restore_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", as_json=as_json, redact=Redactor([CONFIGURED]))
    log = logging.getLogger("test.redaction")
    log.warning("GET https://api.telegram.org/bot%s/getMe failed", TELEGRAM)
    log.warning("connecting to redis://default:hunter2@10.0.0.5:6379 with %s", CONFIGURED.upper())
    try:
        raise RuntimeError(f"upstream echoed xoxb-123456789012-1234567890123-AbCdEfGhIjKl and {CONFIGURED}")
    except RuntimeError:
        log.exception("delivery failed")
    log.warning("bad template %s %s", "one")  # a malformed call is still logged, not raised here
    err = capsys.readouterr().err
    for leaked in (TELEGRAM, "hunter2", CONFIGURED, CONFIGURED.upper(), "xoxb-1234"):
        assert leaked not in err, leaked
    assert err.count("[redacted]") >= 5 and "delivery failed" in err and "RuntimeError" in err
    if as_json:
        lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
        assert any("exc" in line and "[redacted]" in line["exc"] for line in lines)
