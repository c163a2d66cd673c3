"""Every Redis key the bot uses, built in one place.

Keys that one Lua script touches together share the `{prefix}` hash tag so the
script works on Redis Cluster; per-conversation keys hash on the conversation.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass


def _digest(value: str) -> str:
    # Conversation keys and tool arguments can be long or contain spaces; a digest keeps keys short.
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Keys:
    prefix: str = "aic"

    @property
    def _tag(self) -> str:
        return "{" + self.prefix + "}"

    def _queued(self, kind: str, platform: str, name: str) -> str:
        """A key the ingress script touches with the job queue: under the prefix's hash tag."""
        return f"{self._tag}:{kind}:{platform}:{_digest(name)}"

    def _per_workspace(self, kind: str, platform: str, workspace: str) -> str:
        """One key per platform and workspace (the workspace id digested: any length, any characters)."""
        return f"{self.prefix}:{kind}:{platform}:{_digest(workspace)}"

    # ingress and jobs: one hash tag, because dedupe + enqueue is one script
    def dedupe(self, platform: str, event_id: str) -> str:
        return self._queued("dedupe", platform, event_id)

    @property
    def jobs(self) -> str:
        return f"{self._tag}:jobs"

    @property
    def dead_letters(self) -> str:
        return f"{self._tag}:jobs:dead"

    def marker(self, platform: str, name: str) -> str:
        """A flag the ingress script checks or sets with the job (e.g. a thread the bot talks in)."""
        return self._queued("marker", platform, name)

    def order(self, conversation_key: str) -> str:
        """Job ids of one conversation in arrival order; the worker answers only the head."""
        return f"{self._tag}:order:{_digest(conversation_key)}"

    @property
    def ready_jobs(self) -> str:
        """Ids of parked jobs whose turn has come, for any worker to take (bot/worker.py)."""
        return f"{self._tag}:jobs:ready"

    def attempts(self, job_id: str) -> str:
        return f"{self._tag}:attempts:{job_id}"

    # per conversation
    def session(self, conversation_key: str) -> str:
        return f"{self.prefix}:session:{{{_digest(conversation_key)}}}"

    def conversation_lock(self, conversation_key: str) -> str:
        return f"{self.prefix}:lock:{{{_digest(conversation_key)}}}"

    # budgets
    def rate(self, scope: str, ident: str, window: int) -> str:
        return f"{self.prefix}:rate:{scope}:{_digest(ident)}:{window}"

    def tokens_today(self, day: str) -> str:
        return f"{self.prefix}:tokens:{day}"

    def user_tokens_today(self, day: str, user: str) -> str:
        return f"{self.prefix}:tokens:{day}:user:{_digest(user)}"

    # research
    def tool_cache(self, tool: str, arguments_json: str) -> str:
        return f"{self.prefix}:cache:{tool}:{_digest(arguments_json)}"

    def feedback(self, trace_id: str) -> str:
        return f"{self.prefix}:feedback:{trace_id}"

    def trace(self, trace_id: str) -> str:
        return f"{self.prefix}:trace:{trace_id}"

    @property
    def feedback_index(self) -> str:
        """Trace ids that received a vote, scored by the vote's time: the report reads votes from it
        instead of looking up every answer's feedback key."""
        return f"{self.prefix}:feedback:index"

    # the answer log (bot/report): one stream per platform and workspace, and the list of them
    def answer_log(self, platform: str, workspace: str) -> str:
        return self._per_workspace("answers", platform, workspace)

    @property
    def answer_log_index(self) -> str:
        """`platform:workspace` of every answer log, scored by its last write."""
        return f"{self.prefix}:answers:index"

    # the escalation log (bot/report/escalations.py): one stream per platform and workspace, and the list
    def escalation_log(self, platform: str, workspace: str) -> str:
        return self._per_workspace("escalations", platform, workspace)

    @property
    def escalation_log_index(self) -> str:
        """`platform:workspace` of every escalation log, scored by its last write."""
        return f"{self.prefix}:escalations:index"

    # team resolutions: one list per platform and workspace, never read across them
    def team_answers(self, platform: str, workspace: str) -> str:
        return self._per_workspace("team", platform, workspace)

    # adapter-owned state (stream buffers, callback data, tokens); `platform` namespaces it
    def adapter_state(self, platform: str, name: str) -> str:
        return f"{self.prefix}:{platform}:{name}"
