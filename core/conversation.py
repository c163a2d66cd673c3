"""The conversation core: one InboundMessage in, one Reply out, with progress on the way.

It knows no platform. It decides between a command, a clarification, an
out-of-scope notice and an answer (offline triage, or research when a model is
configured), and keeps the thread's memory in the session store.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
import unicodedata
import uuid
from dataclasses import dataclass, replace
from datetime import date
from collections.abc import Sequence
from typing import Any, Awaitable, Callable, Protocol

from redis.exceptions import RedisError

from core.knowledge.loader import load_knowledge_base
from core.environment import Environment, merge_session_env, read_environment
from core.language import detect_language
from core.limits import BudgetState, Reservation, TokenBudget, budget_user
from core.confidence import assess
from core.escalate import ESCALATE_CHOICE, Escalator, is_escalate_command
from core.messages import InboundMessage, Language, Option, Progress, Reply, ReplyKind, Source
from core.router import MINDIE_COMPONENTS, VLLM_ASCEND, RouteDecision, resolve_choice, route
from core.vocabulary.map import VocabularyMap
from core.session import PendingClarification, Session, SessionStore
from core.texts import clarification_text, text, trace_text
from core.index.passage import Passage, Retriever
from core.releases.pinning import Pins, reading_at
from core.releases.reading import ReleaseReading
from core.resolution.answer import SEARCH_RANK, VOCABULARY_K, Match, deciding_repo, dominant_repo, rare_thread_repo, record_of
from core.resolution.answer import thread_outcome
from core.resolution.answer import find as find_resolution
from core.resolution.focus import LogFocus, focus
from core.resolution.memory import ResolutionMemory
from core.resolution.team import QUESTION_CHARS, TeamAnswer, TeamStore, saved_answer_text
from core.resolution.team import best_match as best_team_match
from core.resolution.team import lead as team_lead
from core.resolution.words import specific_words
from core.signals import find_chips
from core.access import Allowlist
from core.triage import shared_lookups, triage, triage_details

log = logging.getLogger(__name__)

_VLLM_LINE = {"vllm-project/vllm", "vllm-project/vllm-ascend"}

ProgressCallback = Callable[[Progress], Awaitable[None]]

# What routing and triage read of a huge paste: the head (the question) and the tail (where a
# traceback's real error is). Keeps every turn linear-time and bounded.
ANALYSIS_HEAD_CHARS = 16_000
ANALYSIS_TAIL_CHARS = 16_000

_HELP_WORDS = {"help", "/help", "帮助", "?", "？", "/start", "usage", "使用说明"}
_RESET_WORDS = {"reset", "/reset", "重置", "清空", "forget", "new topic", "重新开始"}
# The full checklist and what-to-send list for the thread's last question (kept out of answers to stay short).
_DETAILS_WORDS = {"details", "detail", "/details", "more", "详细", "详情", "更多", "展开"}
_TRACE_PATTERN = re.compile(
    r"^(how did you (find|get|know) (this|that)|show (me )?(the )?(trace|sources)|"
    r"你是怎么(找到|查到|知道)的|(怎么|如何)(找到|查到)的|检索过程)[?？!.。]*$",
    re.IGNORECASE,
)


class Researcher(Protocol):
    async def answer(self, request: Any, progress: ProgressCallback) -> Any: ...


@dataclass(frozen=True)
class ConversationLimits:
    max_turns: int = 20
    max_bytes: int = 64_000
    clarification_ttl_seconds: int = 1800


def clean_text(raw: str) -> str:
    """Drop control and format characters (keeping newlines and tabs) and trim."""
    kept = [ch for ch in raw if ch in "\n\t" or unicodedata.category(ch)[0] != "C"]
    return "".join(kept).strip()


def analysis_window(text_: str) -> str:
    if len(text_) <= ANALYSIS_HEAD_CHARS + ANALYSIS_TAIL_CHARS:
        return text_
    return text_[:ANALYSIS_HEAD_CHARS] + "\n…\n" + text_[-ANALYSIS_TAIL_CHARS:]


def _command_word(text_: str) -> str:
    return text_.strip().lower().rstrip("!！.。")


async def _no_progress(_: Progress) -> None:
    return None


class Conversation:
    def __init__(
        self,
        sessions: SessionStore,
        researcher: Researcher | None = None,
        limits: ConversationLimits = ConversationLimits(),
        clock: Callable[[], float] = time.time,
        budget: TokenBudget | None = None,
        on_research: Callable[[Any], None] | None = None,
        retriever: Retriever | None = None,
        memory: Callable[[], ResolutionMemory] | None = None,
        vocabulary: Callable[[], VocabularyMap] | None = None,
        team: TeamStore | None = None,
        experts: Allowlist = Allowlist(),
        escalator: Escalator | None = None,
        releases: ReleaseReading | None = None,
    ) -> None:
        self._releases = releases  # reading at the user's release: tags to pin, what changed since (core/releases)
        self._escalator = escalator or Escalator()  # `escalate`: the thread's question as a pre-filled upstream issue
        self._team = team  # experts' saved answers, per workspace
        self._experts = experts  # who may save them (empty: nobody)
        self._retriever = retriever  # the knowledge index: passages quoted in offline answers
        self._memory = memory  # resolved threads (built with the index): what fixed this before
        self._vocabulary = vocabulary  # which product owns which identifier (built with the index)
        self._on_research = on_research  # metrics hook: sees each research outcome (usage, trace)
        self._sessions = sessions
        self._researcher = researcher
        self._budget = budget
        self._limits = limits
        self._clock = clock

    async def handle(self, message: InboundMessage, progress: ProgressCallback = _no_progress) -> Reply:
        key = message.conversation_key
        body = clean_text(message.text)
        session = await self._sessions.load(key)
        language = self._language_for(body, session)

        if message.choice == ESCALATE_CHOICE or (message.choice is None and is_escalate_command(_command_word(body))):
            return await self._escalator.handle(key, session, self._sessions, language, self._clock(), where=message)
        if message.choice is None:
            word = _command_word(body)
            if not body:
                return Reply(ReplyKind.NOTICE, text("empty", language), language)
            if word in _HELP_WORDS:
                return Reply(ReplyKind.NOTICE, text("help", language), language)
            if word in _RESET_WORDS:
                await self._sessions.delete(key)
                return Reply(ReplyKind.NOTICE, text("reset", language), language)
            if word in _DETAILS_WORDS:
                return self._details(session, language)
            saved = saved_answer_text(body)
            if saved is not None:
                return await self._save_team_answer(message, session, saved, language)
            if _TRACE_PATTERN.match(body):
                shown = trace_text(session.last_trace, language) if session.last_trace else text("no_trace", language)
                return Reply(ReplyKind.NOTICE, shown, language)

        now = self._clock()
        pending = session.pending
        if pending is not None and pending.expired(now):
            pending = None
            session = await self._sessions.update(key, lambda s: replace(s, pending=None, expired_pending=True))

        if pending is not None:
            chosen = self._chosen_option(message, body, pending.options)
            if chosen is not None:
                repos = tuple(dict.fromkeys((*pending.settled_repos, chosen.repo)))
                return await self._answer(message, session, pending.question, repos, pending.language, progress, clarified=True)
        elif message.choice is not None or (session.expired_pending and _looks_like_option_pick(body)):
            return Reply(ReplyKind.NOTICE, text("clarification_expired", language), language)

        analysed = analysis_window(body)
        await progress(Progress(text("progress_routing", language), stage="routing", language=language))
        decision = route(analysed, session_repos=session.repos, vocabulary=self._vocabulary() if self._vocabulary else None)
        # The question's decisive lines and a colleague's saved answer, found once for routing and answering.
        evidence = await self._evidence(message, analysed)
        if pending is None:
            seen, teammate = evidence
            settled = teammate.repos if teammate is not None else ()
            settled = settled or await self._settled_by_threads(seen, analysed, decision)
            if settled:
                # A routed product is never dropped: strong thread evidence only adds the product the
                # known resolution lives in (vllm-ascend named, the fix in upstream vLLM: both).
                repos = tuple(dict.fromkeys((*decision.repos, *settled))) if decision.action == "research" else settled
                return await self._answer(message, session, body, repos, language, progress, clarified=False, evidence=evidence)
        if decision.action == "out_of_scope":
            await self._remember_question(key, body)
            return Reply(ReplyKind.OUT_OF_SCOPE, text("out_of_scope", language), language)
        if decision.action == "clarify" and pending is not None:
            # One clarification round per question: a reply that is still ambiguous goes ahead with
            # the most likely option (options are ordered by likelihood) instead of asking again.
            repos = tuple(dict.fromkeys((*pending.settled_repos, *decision.repos, pending.options[0].repo)))
            question = f"{pending.question}\n{body}"
            return await self._answer(message, session, question, repos, pending.language, progress, clarified=False)
        if decision.action == "clarify":
            return await self._clarify(key, body, decision, language)
        return await self._answer(message, session, body, decision.repos, language, progress, clarified=False, evidence=evidence)

    # --- steps --------------------------------------------------------------------------------

    def _language_for(self, body: str, session: Session) -> Language:
        if body and not _looks_like_option_pick(body):
            return detect_language(body)
        if session.pending is not None:
            return session.pending.language
        return detect_language(body) if body else "en"

    @staticmethod
    def _chosen_option(message: InboundMessage, body: str, options: tuple[Option, ...]) -> Option | None:
        if message.choice is not None:
            return next((o for o in options if o.key == message.choice), None) or resolve_choice(message.choice, options)
        return resolve_choice(body, options)

    async def _clarify(self, key: str, question: str, decision: RouteDecision, language: Language) -> Reply:
        asked = decision.question_zh if language == "zh" else decision.question_en
        pending = PendingClarification(
            question=question,
            options=decision.options,
            language=language,
            expires_at=self._clock() + self._limits.clarification_ttl_seconds,
            settled_repos=decision.repos,  # e.g. vllm-ascend already named beside a bare "MindIE"
        )

        def store(s: Session) -> Session:
            s = s.with_turn("user", question, max_turns=self._limits.max_turns, max_bytes=self._limits.max_bytes)
            return replace(s, pending=pending, expired_pending=False)

        await self._sessions.update(key, store)
        body, sources = clarification_text(asked, decision.options, language), ()
        # A resolved thread of one of the offered products that shares the question's specific words: what
        # another user did is worth reading while they answer (labelled with its product, never a conclusion).
        seen = await self._resolved_thread_alike(analysis_window(question), decision, language)
        if seen is not None:
            body, sources = f"{seen[0]}\n\n{body}", (seen[1],)
        # A CANN variable or an ACL code means the same in every product: answer that part now.
        shared = shared_lookups(analysis_window(question), language)
        if shared is not None:
            body, sources = f"{shared.text}\n\n{body}", (*shared.sources, *sources)
        return Reply(
            ReplyKind.CLARIFY,
            body,
            language,
            repos=tuple(o.repo for o in decision.options),
            options=decision.options,
            sources=sources,
        )

    async def _answer(
        self,
        message: InboundMessage,
        session: Session,
        question: str,
        repos: tuple[str, ...],
        language: Language,
        progress: ProgressCallback,
        *,
        clarified: bool,
        evidence: tuple[LogFocus, TeamAnswer | None] | None = None,
    ) -> Reply:
        """`session` is the one `handle` loaded (or `update` returned): one load per message.
        `evidence` is what `_evidence` found for this very question text, when the caller has it."""
        # The environment this message states, read once: the release pins and triage both use it.
        stated = read_environment(analysis_window(question))
        pins = await asyncio.to_thread(self._releases.pin, stated, session.env, repos) if self._releases else {}
        with reading_at(pins):  # the index, search_code and read_file read at the user's release
            return await self._answer_read(message, question, repos, language, progress, clarified=clarified,
                                           evidence=evidence, session=session, pins=pins, stated=stated)

    async def _answer_read(
        self,
        message: InboundMessage,
        question: str,
        repos: tuple[str, ...],
        language: Language,
        progress: ProgressCallback,
        *,
        clarified: bool,
        evidence: tuple[LogFocus, TeamAnswer | None] | None,
        session: Session,
        pins: Pins,
        stated: Environment,
    ) -> Reply:
        key = message.conversation_key
        analysed = analysis_window(question)
        seen, teammate = evidence if evidence is not None else await self._evidence(message, analysed)
        await progress(Progress(text("progress_diagnosing", language), stage="diagnosing", language=language))
        query = seen.query() or analysed  # a pasted log is searched by its decisive lines, not the whole paste
        # Only the routed products' passages: another product's doc is the wrong product's advice.
        passages = tuple(p for p in await self._passages(query, repos) if not repos or p.repo in repos)
        resolved = await self._resolution(seen, query, repos)
        changed = await asyncio.to_thread(self._releases.notes, pins, analysed, resolved, language, repos, stated,
                                          session.env) if self._releases else None
        offline = triage(analysed, repos, language, known_env=session.env, passages=passages, resolution=resolved,
                         team_lead=team_lead(teammate, language) if teammate is not None else "",
                         keyed_on=seen.keyed_on if seen.is_paste else "",
                         release_notes=changed.lines if changed else (), release_lead=changed.lead if changed else (),
                         release_general=changed.general if changed else (),
                         stated=stated, thread_outcomes=self._thread_outcomes(passages, query, language))
        env = merge_session_env(session.env, offline.stated_environment)  # later values win: a correction sticks
        trace_id = uuid.uuid4().hex
        answer_text, sources, trace = offline.text, offline.sources, ()
        researched: tuple[Source, ...] | None = None  # a model's verified citations, when it answered
        if self._researcher is None:
            answer_text = "\n\n".join((answer_text, *self._missing_docs(repos, language)))

        # Held before the model runs and settled after, so concurrent questions cannot overshoot.
        held = Reservation(BudgetState.OPEN)
        if self._researcher is not None and self._budget is not None:
            held = await self._budget.reserve(budget_user(message))
        budget = held.state
        if budget is BudgetState.ALL_SPENT:
            answer_text = f"{text('budget_exhausted', language)}\n\n{offline.text}"
        elif budget is BudgetState.USER_SPENT:  # one user cannot spend everyone's day: only they fall back
            answer_text = f"{text('user_budget_exhausted', language)}\n\n{offline.text}"
        elif self._researcher is not None:
            from core.research import ResearchRequest  # noqa: PLC0415 - optional feature

            await progress(Progress(text("progress_researching", language, repos=", ".join(repos)), stage="researching", language=language))
            outcome = await self._researcher.answer(
                ResearchRequest(
                    question=analysed,
                    language=language,
                    repos=repos,
                    history=session.history(),
                    known_env=env,
                    triage_markdown=offline.text,
                    user=message.sender_name or message.sender,
                    channel=message.channel,
                    today=date.today().isoformat(),
                ),
                progress,
            )
            trace = tuple(_trace_dict(step) for step in outcome.trace)
            if self._on_research is not None:
                self._on_research(outcome)
            if self._budget is not None:
                try:
                    await self._budget.settle(held, _tokens_of(outcome))
                except RedisError:  # a finished answer is worth more than one settlement (its estimate stays charged)
                    log.warning("could not settle the token spend; Redis unavailable")
            if outcome.ok:
                answer_text, sources = outcome.text, tuple(outcome.sources)
                if offline.environment_line:  # what we read of their stack, shown whichever path answered
                    answer_text = f"{offline.environment_line}\n\n{answer_text}"
                researched = sources
            else:
                answer_text = f"{text('model_unavailable', language)}\n\n{offline.text}"

        def store(s: Session) -> Session:
            if not clarified:
                s = s.with_turn("user", question, max_turns=self._limits.max_turns, max_bytes=self._limits.max_bytes)
            s = s.with_turn("assistant", answer_text, max_turns=self._limits.max_turns, max_bytes=self._limits.max_bytes)
            s = replace(s, last_sources=tuple({"title": x.title, "url": x.url} for x in sources))  # what `escalate` lists as checked
            kept_trace = trace if trace else s.last_trace
            return replace(
                s, repos=repos, env=merge_session_env(s.env, offline.stated_environment), pending=None, expired_pending=False,
                last_trace=kept_trace
            )

        await self._sessions.update(key, store)
        sure = assess(offline, repos=repos, seen=seen, resolution=resolved, teammate=teammate,
                      researched=researched, indexed=self._indexed_repos())
        return Reply(ReplyKind.ANSWER, answer_text, language, repos=repos, sources=sources, trace_id=trace_id, confidence=sure)

    @staticmethod
    def _details(session: Session, language: Language) -> Reply:
        question = next((t.text for t in reversed(session.turns) if t.role == "user"), None)
        if question is None:
            return Reply(ReplyKind.NOTICE, text("no_details", language), language)
        shown = triage_details(analysis_window(question), session.repos, language, known_env=session.env)
        return Reply(ReplyKind.ANSWER, shown.text, language, repos=session.repos, sources=shown.sources)

    async def _passages(self, question: str, repos: tuple[str, ...]) -> tuple[Passage, ...]:
        """The best few passages of the knowledge index (off the event loop; a failure costs only them)."""
        if self._retriever is None:
            return ()
        try:
            return tuple(await asyncio.to_thread(self._retriever.search, question, repos, 3))
        except Exception:  # noqa: BLE001 - the diagnostic answer must not depend on the index
            log.warning("knowledge index search failed", exc_info=True)
            return ()

    def _missing_docs(self, repos: tuple[str, ...], language: Language) -> list[str]:
        """One line per routed product whose docs and code the index lacks (an upstream vLLM question
        on a machine that never cloned vLLM), saying how to add them."""
        have = self._indexed_repos()
        if have is None:
            return []  # no index at all (the offline note already says how to build one), or it failed
        kb = load_knowledge_base()
        return [
            text("docs_not_indexed", language, product=info.display_name, repo=repo)
            for repo in repos
            if repo not in have and (info := kb.repository(repo)) is not None
        ]

    def _indexed_repos(self) -> set[str] | None:
        """The repositories whose docs and code the index holds; None without an index."""
        indexed = getattr(self._retriever, "repos_with_files", None)
        if indexed is None:
            return None
        try:
            return set(indexed())
        except Exception:  # noqa: BLE001 - a note is not worth failing the answer
            return None

    async def _save_team_answer(self, message: InboundMessage, session: Session, answer: str, language: Language) -> Reply:
        if self._team is None or not self._experts.raw:
            return Reply(ReplyKind.NOTICE, text("team_off", language), language)
        if not self._experts.entries_for(message.platform) or not self._experts.admits(message.platform, message.sender):
            return Reply(ReplyKind.NOTICE, text("team_not_expert", language), language)
        question = next((t.text for t in reversed(session.turns) if t.role == "user"), None)
        if question is None:
            return Reply(ReplyKind.NOTICE, text("team_no_question", language), language)
        if not answer:
            return Reply(ReplyKind.NOTICE, text("team_empty", language), language)
        item = TeamAnswer.saved(message.platform, message.workspace, message.channel, message.sender_name or message.sender,
                                question[:QUESTION_CHARS], answer, date.fromtimestamp(self._clock()).isoformat(), session.repos)
        await self._team.add(item)
        return Reply(ReplyKind.NOTICE, text("team_saved", language), language)

    async def _evidence(self, message: InboundMessage, analysed: str) -> tuple[LogFocus, TeamAnswer | None]:
        """The question's decisive lines, and an expert's saved answer from this workspace (never
        another's) that meets it."""
        seen = focus(analysed)
        if self._team is None:
            return seen, None
        try:
            return seen, best_team_match(await self._team.of_workspace(message.platform, message.workspace), seen)
        except RedisError:  # the rest of the answer does not depend on it
            log.warning("team answers unavailable; Redis error")
            return seen, None

    async def _settled_by_threads(self, seen: LogFocus, analysed: str, decision: RouteDecision) -> tuple[str, ...]:
        """Repositories the threads settle when the router would ask or decline.

        Users rarely name the product; their error line does. A resolved thread with the question's
        error signature, or the top thread sharing specific words, settles a question within the
        options the router offered; all five best passages from one repository settle it when
        nothing was named. A decline is overruled, and a routed answer widened, only by an exact
        signature or a thread sharing rare identifiers. One issue search serves every check."""
        if self._memory is None or self._retriever is None:
            return ()
        candidates = tuple(dict.fromkeys((*decision.repos, *(o.repo for o in decision.options))))
        scope = candidates if decision.action == "clarify" else ()
        query = seen.query() or analysed
        try:
            memory = self._memory()
            threads = await asyncio.to_thread(self._retriever.search, query, scope, SEARCH_RANK, "issue")
            match = find_resolution(memory, seen, scope, threads)
            if decision.action == "research":
                # An exact error signature widens a routed answer; a thread sharing rare identifiers only
                # across the vLLM / vllm-ascend line (the plugin inherits upstream's code and its fixes).
                repo = match.record.repo if match is not None and match.via == "signature" else None
                if repo is None:
                    repo = rare_thread_repo(memory, seen, threads)
                    repo = repo if repo and {repo, *decision.repos} <= _VLLM_LINE else None
                if repo == VLLM_ASCEND and not decision.ascend and VLLM_ASCEND not in decision.repos:
                    return ()  # no NPU in the question: a plugin thread alike in words is not this user's case
                return (repo,) if repo else ()
            if decision.action != "clarify":
                repo = match.record.repo if match is not None and match.via == "signature" else rare_thread_repo(memory, seen, threads)
                return (repo,) if repo else ()
            if not decision.specific:
                # The question names no identifier (a model, a chip, a feature in words): a thread alike in
                # words tells what another user ran, not which stack this user runs, and the products'
                # answers differ. Only a resolved thread that matches with confidence (its exact error
                # signature, or one that stands out by rare shared words: core/resolution/answer.py) settles it.
                repo = match.record.repo if match is not None else ""
                return tuple(dict.fromkeys((*decision.repos, repo))) if repo in candidates else ()
            repo = match.record.repo if match is not None else deciding_repo(memory, seen, threads)
            # Votes only among different stacks: sibling products (the MindIE components) share docs.
            if not repo and not decision.repos and len(candidates) >= 3 and not set(candidates) <= set(MINDIE_COMPONENTS):
                repo = dominant_repo(await asyncio.to_thread(self._retriever.search, query, scope, VOCABULARY_K))
        except Exception:  # noqa: BLE001 - asking or declining is the safe fallback
            log.warning("thread lookup for routing failed", exc_info=True)
            return ()
        return tuple(dict.fromkeys((*decision.repos, repo))) if repo in candidates else ()

    async def _resolved_thread_alike(self, question: str, decision: RouteDecision, language: Language) -> tuple[str, Source] | None:
        """The best issue passage among the offered products, when its thread was resolved and it shares a
        specific word with the question: one line naming its product, or None (a failure costs only it)."""
        if self._memory is None or self._retriever is None:
            return None
        scope = tuple(o.repo for o in decision.options)
        try:
            memory = self._memory()
            found = await asyncio.to_thread(self._retriever.search, focus(question).query() or question, scope, 1, "issue")
            passage = next((p for p in found if p.kind == "issue" and p.repo in scope), None)
            record = record_of(memory, passage) if passage is not None else None
            outcome = thread_outcome(record, language, question, passage.text) if record is not None and passage is not None else ""
        except Exception:  # noqa: BLE001 - the question is asked either way
            log.warning("thread lookup for a clarification failed", exc_info=True)
            return None
        if not outcome or passage is None or record is None or not _telling_words(question, f"{record.title}\n{passage.text}"):
            return None
        where = f"{record.repo.split('/', 1)[-1]} #{record.number}"
        return text("clarify_seen_thread", language, where=where, outcome=outcome), Source(title=f"{record.repo}#{record.number}", url=record.url)

    async def _resolution(self, seen: LogFocus, query: str, repos: tuple[str, ...]) -> Match | None:
        """The resolved thread this question matches with confidence, if any (a failure costs only it)."""
        if self._memory is None:
            return None
        try:
            memory = self._memory()
            if not len(memory):
                return None
            threads: list[Passage] = []
            if self._retriever is not None:
                found = await asyncio.to_thread(self._retriever.search, query, repos, SEARCH_RANK, "issue")
                threads = [p for p in found if not repos or p.repo in repos]
            return find_resolution(memory, seen, repos, threads)
        except Exception:  # noqa: BLE001 - the diagnostic answer must not depend on the memory
            log.warning("resolution lookup failed", exc_info=True)
            return None

    def _thread_outcomes(self, passages: Sequence[Passage], question: str, language: Language) -> dict[str, str]:
        """How each related thread among the passages was resolved (by url), from the resolution memory."""
        if self._memory is None or not any(p.kind == "issue" for p in passages):
            return {}
        try:
            memory = self._memory()
            records = ((p, record_of(memory, p)) for p in passages if p.kind == "issue")
            return {p.url: line for p, record in records
                    if record is not None and (line := thread_outcome(record, language, question, p.text))}
        except Exception:  # noqa: BLE001 - like _resolution: the answer must not depend on the memory
            log.warning("thread outcome lookup failed", exc_info=True)
            return {}

    async def _remember_question(self, key: str, question: str) -> None:
        def store(s: Session) -> Session:
            s = s.with_turn("user", question, max_turns=self._limits.max_turns, max_bytes=self._limits.max_bytes)
            return replace(s, pending=None, expired_pending=False)

        await self._sessions.update(key, store)


_OPTION_PICK = re.compile(r"^\s*(第\s*)?[0-9０-９]{1,2}\s*(个|号|项)?\s*[.。)）]?\s*$")


def _telling_words(question: str, thread: str) -> set[str]:
    """The specific words a question and a thread share that say what the thread is about: a chip
    ("910b"), a version number or a word fragment ("-smi") is shared by threads about anything."""
    return {w for w in specific_words(question) & specific_words(thread)
            if any(c.isalpha() for c in w) and not w.startswith("-") and not find_chips(w, w)}


def _looks_like_option_pick(body: str) -> bool:
    return bool(_OPTION_PICK.match(body))


def _trace_dict(step: Any) -> dict[str, Any]:
    if isinstance(step, dict):
        return step
    if hasattr(step, "to_dict"):
        return step.to_dict()
    return {
        "tool": getattr(step, "tool", "?"),
        "arguments": dict(getattr(step, "arguments", {}) or {}),
        "duration_ms": getattr(step, "duration_ms", None),
        "ok": getattr(step, "ok", True),
    }


def _tokens_of(outcome: Any) -> int:
    usage = getattr(outcome, "usage", None)
    return sum(int(getattr(usage, name, 0) or 0) for name in ("input", "output", "cache_write", "cache_read"))
