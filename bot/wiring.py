"""The composition root: builds every part from settings, once, in one place."""
from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from adapters import registry
from adapters.base import AdapterDeps, PlatformAdapter, PlatformMisconfigured
from adapters.common.config_check import PlatformCheck, misconfigured_line
from bot.access_check import access_policy, check_access
from bot.metrics import Metrics
from bot.report.access import AdminAuth
from bot.report.limits import LogLimits
from bot.report.log import AnswerLog
from bot.report.usage import add_research_usage
from bot.settings import Settings
from core.ingress import Ingress
from core.keys import Keys
from core.limits import RateLimiter, TokenBudget
from core.research.redact import Redactor
from core.session import RedisSessionStore

if TYPE_CHECKING:
    from core.conversation import ConversationLimits
    from core.escalate import EscalationJournal, Escalator

log = logging.getLogger(__name__)


@dataclass
class Components:
    settings: Settings
    redis: aioredis.Redis
    keys: Keys
    ingress: Ingress
    conversation: Any  # Conversation, or a scripted stand-in in tests
    adapters: dict[str, PlatformAdapter] = field(default_factory=dict)
    researcher: Any = None
    metrics: Metrics | None = None
    limiter: RateLimiter | None = None
    answer_log: AnswerLog | None = None  # one record per delivered reply, for the admin report

    async def aclose(self) -> None:
        for adapter in self.adapters.values():
            try:
                await adapter.stop()
            except Exception:  # noqa: BLE001 - closing must go on for the others
                log.exception("adapter %s failed to stop", adapter.name)
        if self.researcher is not None and hasattr(self.researcher, "aclose"):
            await self.researcher.aclose()
        await self.redis.aclose()


def redis_client(url: str) -> aioredis.Redis:
    """Short timeouts and few retries: a webhook must answer 503 well inside Slack's 3 seconds
    when Redis is down, so the platform retries instead of timing out on us."""
    return aioredis.Redis.from_url(
        url,
        health_check_interval=30,
        socket_connect_timeout=1.0,
        socket_timeout=10.0,  # above the worker's 1 s blocking read
        retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 2),
    )


def escalator(settings: Settings, journal: "EscalationJournal | None" = None) -> "Escalator":
    """`escalate` in a thread: redacted with every configured secret; filed directly only when asked;
    each new escalation told to `journal` (the admin report's escalation log) when given."""
    from bot.issues.filing import issue_filer  # noqa: PLC0415
    from core.escalate import Escalator  # noqa: PLC0415
    from core.research.redact import Redactor  # noqa: PLC0415

    return Escalator(Redactor.from_settings(settings), issue_filer(settings), journal)


def conversation_limits(settings: Settings) -> "ConversationLimits":
    from core.conversation import ConversationLimits  # noqa: PLC0415 - keeps worker/ingress imports light

    return ConversationLimits(
        max_turns=settings.session_max_turns,
        max_bytes=settings.session_max_bytes,
        clarification_ttl_seconds=settings.clarification_ttl_seconds,
    )


def build_retriever(settings: Settings, *, warm: bool = True) -> Any:
    """The knowledge index when one was built (`python -m bot index`), else None: answers go on without it."""
    from dataclasses import replace  # noqa: PLC0415

    from core.index.ranking import DEFAULT_PARAMS  # noqa: PLC0415
    from core.index.search import KnowledgeIndex  # noqa: PLC0415

    params = DEFAULT_PARAMS if settings.index_min_score is None else replace(DEFAULT_PARAMS, threshold=settings.index_min_score)
    index = KnowledgeIndex.open_if_present(settings.index_path, check_every=settings.index_check_seconds, params=params)
    if index is None:
        log.info("no knowledge index in %s: answers without passages (run `python -m bot index`)", settings.index_path)
        return None
    elif warm:
        import threading  # noqa: PLC0415

        from core.index.tokenizer import warm_up  # noqa: PLC0415

        # jieba's dictionary (~1 s) loads beside the start-up, not on a user's first Chinese question
        threading.Thread(target=warm_up, name="jieba-warm-up", daemon=True).start()
    return _at_releases(settings, index, params, background=warm)


def _at_releases(settings: Settings, index: Any, params: Any, *, background: bool) -> Any:
    """The index, read at the answer's pinned release where there is one (core/releases/index.py)."""
    from core.releases.index import ReleaseAwareRetriever, ReleaseIndexes  # noqa: PLC0415
    from core.releases.pinning import ReleasePinner  # noqa: PLC0415
    from core.research.repos import find_repo, web_base  # noqa: PLC0415

    def base(repo: str, clone: Any) -> str:
        info = find_repo(repo)
        return web_base(info, dict(settings.repo_urls), clone) if info is not None else ""

    releases = ReleaseIndexes(settings.index_path, ReleasePinner(settings.repos_dir), base,
                              kept=settings.release_indexes_kept, params=params, background=background)
    return ReleaseAwareRetriever(index, releases)


def release_reading(settings: Settings) -> Any:
    """Pins each answer to the user's release and says what changed since (core/releases/reading.py)."""
    from core.releases.reading import ReleaseReading  # noqa: PLC0415

    return ReleaseReading(settings.repos_dir)


def open_memory(settings: Settings) -> Any:
    """Resolution memory of the index directory (empty until `python -m bot index` has read issues);
    one per process, shared by the offline answers and the research tools."""
    from core.resolution.memory import MemoryFile  # noqa: PLC0415

    return MemoryFile(settings.index_path, check_every=settings.index_check_seconds)


def open_vocabulary(settings: Settings) -> Any:
    """The vocabulary map of the index directory (empty until `python -m bot index` has read clones):
    the router's evidence when a question names no product."""
    from core.vocabulary.map import vocabulary_file  # noqa: PLC0415

    return vocabulary_file(settings.index_path, check_every=settings.index_check_seconds)


def build_researcher(settings: Settings, redis: Any, keys: Keys, retriever: Any = None, memory: Any = None) -> Any:
    """The research agent when a model key is set, else None (offline triage)."""
    if not settings.llm_enabled:
        return None
    try:
        research = importlib.import_module("core.research")
    except ImportError:
        log.warning("research agent is not available in this build; answering offline")
        return None
    return research.build_research_agent(settings, redis, keys, retriever=retriever, memory=memory)


class PlatformStartupError(ValueError):
    """A platform whose credentials are set cannot start: startup stops with one line per platform."""


def enabled_platforms(settings: Settings) -> list[str]:
    """Every registered platform whose credentials are set: the operator meant to run it."""
    return [p.name for p in registry.platforms() if p.credentials_set(settings)]


def platform_checks(settings: Settings) -> dict[str, PlatformCheck]:
    """Each platform's own check (adapters/<name>/settings.py `check_settings`): its mode and problems.
    Startup refuses on these and `doctor` prints them, so the two always agree."""
    return {p.name: p.check(settings) for p in registry.platforms() if p.check is not None}


def misconfigured_platforms(settings: Settings) -> list[str]:
    """One line per platform whose values cannot work (the words `doctor` prints too)."""
    return [misconfigured_line(name, check) for name, check in platform_checks(settings).items() if check.problems]


def build_adapters(deps: AdapterDeps) -> dict[str, PlatformAdapter]:
    """Every platform whose credentials are set. One that is configured but cannot be imported or
    built stops startup: skipping it would leave its users' questions unanswered without a word.
    Every misconfigured platform is named at once, before any adapter is built."""
    refused = misconfigured_platforms(deps.settings)
    if refused:
        raise PlatformStartupError("\n".join(refused))
    adapters: dict[str, PlatformAdapter] = {}
    for platform in [p for p in registry.platforms() if p.credentials_set(deps.settings)]:
        name = platform.name
        try:
            adapter = platform.create_adapter(deps)
        except ImportError as exc:
            raise PlatformStartupError(f"{name} credentials are set but its adapter cannot be imported: {exc}") from None
        except PlatformMisconfigured as exc:  # raised with misconfigured_line's words
            raise PlatformStartupError(str(exc)) from None
        if adapter is not None:
            adapters[name] = adapter
    return adapters


def _observe_research(metrics: Metrics, outcome: Any) -> None:
    metrics.observe_research(outcome)  # the process's counters (/metrics)
    add_research_usage(outcome)  # the job's own tally, for its answer record (bot/report)


def build_components(
    settings: Settings,
    *,
    redis: aioredis.Redis | None = None,
    conversation: Any = None,
    with_adapters: bool = True,
) -> Components:
    if settings.redis_url is None and redis is None:
        raise ValueError("build_components needs REDIS_URL (the CLI starts an embedded server when it is unset)")
    access = access_policy(settings)
    if with_adapters:  # a process that takes platform traffic: no open platform unless opened on purpose
        check_access(access, enabled_platforms(settings))
    client = redis or redis_client(settings.redis_url or "")
    keys = Keys(settings.redis_prefix)
    metrics = Metrics()
    ingress = Ingress(client, keys, settings.dedupe_ttl_seconds, access, on_submit=metrics.count_event)
    researcher = None
    if conversation is None:
        from bot.access_check import experts  # noqa: PLC0415
        from bot.report.escalations import EscalationLog  # noqa: PLC0415 - imports core.escalate
        from core.conversation import Conversation  # noqa: PLC0415
        from core.resolution.team import RedisTeamStore  # noqa: PLC0415

        retriever = build_retriever(settings)
        memory = open_memory(settings).current
        researcher = build_researcher(settings, client, keys, retriever, memory)
        conversation = Conversation(
            RedisSessionStore(client, keys, settings.session_ttl_seconds),
            researcher=researcher,
            limits=conversation_limits(settings),
            budget=TokenBudget(
                client, keys, settings.daily_token_budget, settings.user_daily_token_budget, settings.answer_token_reserve
            ),
            on_research=lambda outcome: _observe_research(metrics, outcome),
            retriever=retriever,
            memory=memory,
            vocabulary=open_vocabulary(settings).current,
            team=RedisTeamStore(client, keys),
            experts=experts(settings),
            escalator=escalator(settings, EscalationLog(client, keys, LogLimits.from_settings(settings),
                                                        Redactor.from_settings(settings))),
            releases=release_reading(settings),
        )
    limiter = RateLimiter(client, keys, settings.rate_limit_user_per_hour, settings.rate_limit_channel_per_hour)
    AdminAuth.from_settings(settings)  # a malformed admin token stops startup with one line, like other settings
    answer_log = AnswerLog(client, keys, LogLimits.from_settings(settings), Redactor.from_settings(settings))
    components = Components(
        settings, client, keys, ingress, conversation, researcher=researcher, metrics=metrics, limiter=limiter,
        answer_log=answer_log,
    )
    if with_adapters:
        components.adapters = build_adapters(AdapterDeps(settings=settings, redis=client, ingress=ingress))
    return components
