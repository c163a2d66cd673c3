import io
import json
import logging

from bot.logs import JsonFormatter, JobContextFilter, configure_logging, job_context


def test_json_lines_carry_the_job_context():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(JobContextFilter())
    log = logging.getLogger("test.jobctx")
    log.addHandler(handler)
    log.propagate = False
    token = job_context.set({"job_id": "1-0", "conversation": "slack:T:C:1.0", "platform": "slack"})
    try:
        log.warning("delivery failed")
    finally:
        job_context.reset(token)
        log.removeHandler(handler)
    line = json.loads(stream.getvalue())
    assert line["job_id"] == "1-0" and line["conversation"] == "slack:T:C:1.0" and line["msg"] == "delivery failed"


def test_http_client_loggers_are_quiet_at_info():
    names = ("httpx", "anthropic", "telegram", "slack_sdk")
    saved = {n: logging.getLogger(n).level for n in names}
    root = logging.getLogger()
    saved_root = (root.level, root.handlers[:])
    try:
        configure_logging("INFO", as_json=True)
        assert logging.getLogger("httpx").getEffectiveLevel() >= logging.WARNING
        assert logging.getLogger("anthropic").getEffectiveLevel() >= logging.WARNING
    finally:  # logging is process-global: later tests capture DEBUG lines from these loggers
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)
        root.setLevel(saved_root[0])
        root.handlers[:] = saved_root[1]
