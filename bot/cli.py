"""`python -m bot <command>`: ask, chat, serve, web, worker, sync, import, index, search, doctor, eval, report, digest."""
from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.terminal.render import render_json, render_text
from bot.chat_input import stdin_reader, terminal_paste_mode
from bot.logs import configure_logging
from bot.settings import Settings, settings_model
from bot.terminal_stream import TerminalProgress
from core.conversation import Conversation
from core.messages import InboundMessage, Reply
from core.session import MemorySessionStore

log = logging.getLogger(__name__)


def terminal_message(text: str, thread: str) -> InboundMessage:
    message_id = uuid.uuid4().hex
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        user = "local"
    return InboundMessage(
        platform="terminal",
        workspace="local",
        channel="terminal",
        thread=thread,
        sender=user,
        text=text,
        message_id=message_id,
        event_id=message_id,
        is_direct=True,
    )


def local_conversation(
    settings: Settings, offline: bool, on_research: Callable[[Any], None] | None = None
) -> tuple[Conversation, Any]:
    """A conversation for the terminal: memory in process, research when a key is set and not offline."""
    from bot.access_check import experts  # noqa: PLC0415
    from bot.wiring import build_researcher, build_retriever, conversation_limits, escalator, open_memory, open_vocabulary  # noqa: PLC0415
    from bot.wiring import release_reading  # noqa: PLC0415
    from core.keys import Keys  # noqa: PLC0415
    from core.resolution.team import MemoryTeamStore  # noqa: PLC0415

    researcher = None
    retriever = build_retriever(settings, warm=False)  # None without an index: answers go on without passages
    memory = open_memory(settings).current
    if not offline and settings.llm_enabled:
        redis = None
        if settings.redis_url:
            import redis.asyncio as aioredis  # noqa: PLC0415

            redis = aioredis.Redis.from_url(settings.redis_url)
        researcher = build_researcher(settings, redis, Keys(settings.redis_prefix), retriever, memory)
    conversation = Conversation(
        MemorySessionStore(),
        researcher=researcher,
        limits=conversation_limits(settings),
        on_research=on_research,
        retriever=retriever,
        memory=memory,
        vocabulary=open_vocabulary(settings).current,
        team=MemoryTeamStore(),
        experts=experts(settings),
        escalator=escalator(settings),
        releases=release_reading(settings),
    )
    return conversation, researcher


def _progress_to_stderr() -> TerminalProgress:
    """Status lines and the streamed answer on stderr, when a person watches it."""
    return TerminalProgress(sys.stderr, enabled=sys.stderr.isatty())


def _read_stdin_lines() -> list[str]:
    raw = sys.stdin.buffer.read()
    return raw.decode("utf-8", errors="replace").splitlines()


async def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    conversation, researcher = local_conversation(settings, args.offline)
    try:
        if args.question == "-":
            for line in _read_stdin_lines():
                progress = _progress_to_stderr()
                reply = await conversation.handle(terminal_message(line, uuid.uuid4().hex), progress)
                progress.finish()
                _print_reply(reply, as_json=True if args.json else False)
            return 0
        question = " ".join(args.question) if isinstance(args.question, list) else args.question
        progress = _progress_to_stderr()
        reply = await conversation.handle(terminal_message(question, uuid.uuid4().hex), progress)
        progress.finish()
        _print_reply(reply, as_json=args.json)
        return 0
    finally:
        if researcher is not None and hasattr(researcher, "aclose"):
            await researcher.aclose()


def _print_reply(reply: Reply, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(render_json(reply), ensure_ascii=False), flush=True)
    else:
        print(render_text(reply), flush=True)


async def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    conversation, researcher = local_conversation(settings, args.offline)
    thread = uuid.uuid4().hex
    mode = "offline triage" if researcher is None else "research"
    print(f"Ascend Inference Copilot ({mode}). Type `help`, `reset`, or Ctrl-D to quit; "
          "a pasted log is one message.", flush=True)
    reader = stdin_reader()
    try:
        with terminal_paste_mode(sys.stdin.fileno(), sys.stdout):
            while True:
                print("you> ", end="", flush=True)
                text = await asyncio.to_thread(reader.read_message)
                if text is None:
                    print()
                    return 0
                progress = _progress_to_stderr()
                reply = await conversation.handle(terminal_message(text, thread), progress)
                progress.finish()
                print(render_text(reply) + "\n", flush=True)
    finally:
        if researcher is not None and hasattr(researcher, "aclose"):
            await researcher.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Ascend Inference Copilot")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer one question (or one per stdin line with '-')")
    ask.add_argument("question", nargs="+", help="the question, or '-' to read one per line from stdin")
    ask.add_argument("--json", action="store_true", help="print one JSON object per answer")
    ask.add_argument("--offline", action="store_true", help="never call the model: offline triage only")

    chat = sub.add_parser("chat", help="interactive conversation with memory")
    chat.add_argument("--offline", action="store_true")

    for name, text_ in (("serve", "web app and workers in one process"), ("web", "webhooks and receivers only"),
                        ("worker", "job workers only")):
        p = sub.add_parser(name, help=text_)
        p.add_argument("--host")
        p.add_argument("--port", type=int)

    sync = sub.add_parser("sync", help="clone or update the repositories for code search")
    sync.add_argument("repos", nargs="*", help="owner/name (default: all)")
    sync.add_argument("--issues", action="store_true", help="download issues only, into DATA_DIR/issues (docs/issues-sync.md)")
    sync.add_argument("--max-pages", type=int, metavar="N", help="with --issues: stop each repository after N pages")
    sync.add_argument("--full", action="store_true",
                      help="with --issues: list everything now and drop the threads the host no longer lists")
    sync.add_argument("--from", dest="from_dir", metavar="DIR", type=Path,
                      help="adopt clones, NAME.bundle files or .tar.gz/.zip archives copied into DIR (no network)")
    imp = sub.add_parser("import", help="add issue/PR thread dumps (JSON Lines) to DATA_DIR/issues (docs/issues-sync.md)")
    imp.add_argument("file", help="a .jsonl file, one thread per line")
    imp.add_argument("--repo", metavar="OWNER/NAME", help="the repository of lines that do not name one")
    sub.add_parser("doctor", help="check configuration and connectivity")

    index = sub.add_parser("index", help="build or refresh the knowledge index from the local clones")
    index.add_argument("repos", nargs="*", help="owner/name to re-index (default: all)")
    search = sub.add_parser("search", help="ranked passages from the knowledge index")
    search.add_argument("query", nargs="+", help="the question, or '-' to read one per line from stdin")
    search.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME", help="restrict to a repository")
    search.add_argument("-k", type=int, default=5, help="passages per query (default 5)")
    search.add_argument("--json", action="store_true", help="one JSON line per query")

    from bot.eval.command import add_parser as add_eval_parser  # noqa: PLC0415

    add_eval_parser(sub)
    from bot.report.command import add_parser as add_report_parser  # noqa: PLC0415

    add_report_parser(sub)
    from bot.report.digest_command import add_parser as add_digest_parser  # noqa: PLC0415

    add_digest_parser(sub)

    args = parser.parse_args(argv)
    if args.command == "sync" and args.max_pages is not None and (not args.issues or args.max_pages < 1):
        parser.error("--max-pages takes a positive number and only applies with --issues")
    if args.command == "sync" and args.full and not args.issues:
        parser.error("--full only applies with --issues")
    if args.command == "sync" and args.from_dir is not None and args.issues:
        parser.error("--from adopts repository copies; it does not apply with --issues")
    from bot.settings_errors import load_settings  # noqa: PLC0415

    loaded = load_settings(settings_model())  # every registered platform's settings
    if loaded is None:  # a value no setting accepts: said in one line per variable, the same for every command
        return 2
    settings = loaded
    quiet = args.command in ("ask", "chat", "eval", "search")
    from core.research.redact import Redactor  # noqa: PLC0415

    # secrets from settings and common token shapes never reach a log line
    configure_logging("WARNING" if quiet else settings.log_level, settings.log_json, Redactor.from_settings(settings))
    if args.command == "ask":
        args.question = "-" if args.question == ["-"] else args.question
        return asyncio.run(cmd_ask(args, settings))
    if args.command == "chat":
        return asyncio.run(cmd_chat(args, settings))
    if args.command in ("serve", "web", "worker"):
        from bot.server import run_server  # noqa: PLC0415 - heavy imports only when serving

        return asyncio.run(run_server(settings, args.command, host=args.host, port=args.port))
    if args.command == "sync":
        if args.issues:
            from bot.issues.sync import run_issues_sync  # noqa: PLC0415

            return asyncio.run(run_issues_sync(settings, args.repos, args.max_pages, full=args.full))
        from bot.sync_command import run_sync  # noqa: PLC0415

        return asyncio.run(run_sync(settings, args.repos, args.from_dir))
    if args.command == "eval":
        from bot.eval.command import cmd_eval  # noqa: PLC0415

        return asyncio.run(cmd_eval(args, settings))
    if args.command == "report":
        from bot.report.command import cmd_report  # noqa: PLC0415

        return asyncio.run(cmd_report(args, settings))
    if args.command == "digest":
        from bot.report.digest_command import cmd_digest  # noqa: PLC0415

        return asyncio.run(cmd_digest(args, settings))
    if args.command == "import":
        from bot.import_command import run_import  # noqa: PLC0415

        return run_import(settings, args.file, args.repo)
    if args.command == "index":
        from bot.index_command import run_index  # noqa: PLC0415

        return run_index(settings, args.repos)
    if args.command == "search":
        from bot.search_command import run_search  # noqa: PLC0415

        return run_search(settings, args.query, args.repo, args.k, args.json)
    if args.command == "doctor":
        from bot.doctor import run_doctor  # noqa: PLC0415

        return asyncio.run(run_doctor(settings))
    return 2
