"""Fixed bot texts in both languages. Markdown."""
from __future__ import annotations

from core.messages import Language, Option

_HELP = {
    "en": (
        "**Ascend Inference Copilot** answers questions about vLLM, vllm-ascend, SGLang, MindIE-LLM, "
        "MindIE-SD, MindIE-Motor, MindIE-PyMotor, MindIE-Turbo and msModelSlim, with sources.\n\n"
        "Try for example:\n"
        "- `vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup, why?`\n"
        "- `ACL error 507015 on Atlas 800I A2 with graph mode`\n"
        "- `How do I quantize Qwen3 to W8A8 with msModelSlim and serve it with vllm-ascend?`\n\n"
        "Commands: `help` shows this, `details` expands the last answer's checklist and what to send, `reset` forgets this thread, `how did you find this?` shows the research trace, `escalate` drafts an upstream issue from this thread."
    ),
    "zh": (
        "**昇腾推理助手** 解答 vLLM、vllm-ascend、SGLang、MindIE-LLM、MindIE-SD、MindIE-Motor、"
        "MindIE-PyMotor、MindIE-Turbo 和 msModelSlim 相关问题，并给出来源。\n\n"
        "例如：\n"
        "- `vllm-ascend 0.9.1 搭配 vllm 0.11.0 启动失败，为什么？`\n"
        "- `Atlas 800I A2 开图模式报 ACL 错误 507015`\n"
        "- `如何用 msModelSlim 把 Qwen3 量化成 W8A8 并用 vllm-ascend 部署？`\n\n"
        "命令：`帮助` 显示本说明，`详细` 展开上一个回答的排查清单和需提供的信息，`重置` 清空本话题的记忆，`你是怎么找到的` 显示检索过程，`提交问题` 根据本话题起草一个上游 issue。"
    ),
}

_TEXTS: dict[str, dict[str, str]] = {
    "reset": {"en": "Done: I forgot this thread. Ask a new question any time.", "zh": "已清空本话题的记忆，可以重新提问。"},
    "empty": {
        "en": "I didn't find a question in your message. Ask me about an Ascend inference repository, or send `help`.",
        "zh": "没有看到问题内容。请提一个关于昇腾推理代码仓的问题，或发送 `帮助`。",
    },
    "out_of_scope": {
        "en": (
            "That is outside what I cover. I answer questions about the Ascend inference repositories: "
            "vLLM, vllm-ascend, SGLang, MindIE-LLM, MindIE-SD, MindIE-Motor, MindIE-PyMotor, MindIE-Turbo "
            "and msModelSlim. Send `help` for examples."
        ),
        "zh": (
            "这个问题不在我的范围内。我只解答昇腾推理相关代码仓的问题：vLLM、vllm-ascend、SGLang、"
            "MindIE-LLM、MindIE-SD、MindIE-Motor、MindIE-PyMotor、MindIE-Turbo 和 msModelSlim。发送 `帮助` 查看示例。"
        ),
    },
    "clarify_reply_hint": {
        "en": "Reply with a number or a name.",
        "zh": "请回复编号或名称。",
    },
    "clarification_expired": {
        "en": "That choice belongs to a question that has expired. Please ask your question again, with the project name.",
        "zh": "这个选项对应的问题已过期。请带上项目名称重新提问。",
    },
    "no_details": {
        "en": "There is no earlier question in this thread to expand. Ask your question first, then send `details`.",
        "zh": "本话题中还没有可以展开的问题。请先提问，再发送 `详细`。",
    },
    "team_saved": {
        "en": "Saved as this workspace's answer to the thread's question. The next time someone here asks it, they get your answer first, with your name.",
        "zh": "已保存为本工作区对该问题的回答。之后这里有人问到同样的问题，会先看到你的回答并注明出处。",
    },
    "team_not_expert": {
        "en": "Only the experts listed in EXPERTS can save answers for the team.",
        "zh": "只有 EXPERTS 中列出的专家可以为团队保存回答。",
    },
    "team_no_question": {
        "en": "There is no question in this thread to attach an answer to. Use `save as answer: …` in the thread of the question.",
        "zh": "本话题中没有可以关联的问题。请在提问的话题里发送 `保存答案：……`。",
    },
    "team_empty": {
        "en": "Write the answer after the command: `save as answer: <the answer>`.",
        "zh": "请在命令后写上回答：`保存答案：<回答内容>`。",
    },
    "team_off": {
        "en": "Saving team answers is not set up here (it needs EXPERTS and a Redis-backed deployment).",
        "zh": "本部署未开启团队回答保存（需要配置 EXPERTS 并使用 Redis）。",
    },
    "docs_not_indexed": {
        "en": "_No local copy of {product}'s docs and code, so this answer rests on the knowledge base and its issue threads: "
              "`python -m bot sync {repo}` then `python -m bot index` adds them._",
        "zh": "_本地没有 {product} 的文档和代码，本回答只依据内置知识库和它的 issue 讨论："
              "运行 `python -m bot sync {repo}` 再运行 `python -m bot index` 即可加入。_",
    },
    "no_trace": {
        "en": "I have no research trace for this thread yet: the last answer used no tools.",
        "zh": "本话题还没有检索记录：上一个回答没有调用工具。",
    },
    "model_unavailable": {
        "en": "_The research model is unavailable right now, so here is the offline diagnostic instead._",
        "zh": "_研究模型暂时不可用，以下是离线诊断结果。_",
    },
    "internal_error": {
        "en": "Sorry, something went wrong while answering. Please try again in a minute.",
        "zh": "抱歉，回答时出错了，请稍后再试。",
    },
    "rate_limited": {
        "en": "You've reached the question limit for now. Please try again in about {minutes} min.",
        "zh": "提问次数已达上限，请约 {minutes} 分钟后再试。",
    },
    "budget_exhausted": {
        "en": "_Today's research budget is used up, so this is the offline diagnostic._",
        "zh": "_今日研究额度已用完，以下是离线诊断结果。_",
    },
    "user_budget_exhausted": {
        "en": "_You have used your share of today's research budget (it renews at 00:00 UTC), so this is the offline diagnostic._",
        "zh": "_你今天的研究额度已用完（UTC 零点，即北京时间 8 点重置），以下是离线诊断结果。_",
    },
    "clarify_seen_thread": {
        "en": "**Possibly related** ({where}, a thread of that project): {outcome}",
        "zh": "**可能相关**（{where}，该项目的帖子）：{outcome}",
    },
    "progress_routing": {"en": "Reading your question…", "zh": "正在理解问题…"},
    "progress_diagnosing": {"en": "Running the quick diagnostic…", "zh": "正在进行快速诊断…"},
    "progress_researching": {"en": "Researching {repos}…", "zh": "正在检索 {repos}…"},
}


def text(name: str, language: Language, **values: str) -> str:
    template = _HELP[language] if name == "help" else _TEXTS[name][language]
    return template.format(**values) if values else template


def clarification_text(question: str, options: tuple[Option, ...], language: Language) -> str:
    lines = [question, ""]
    lines += [f"{i}. {o.label}" for i, o in enumerate(options, start=1)]
    lines += ["", text("clarify_reply_hint", language)]
    return "\n".join(lines)


def trace_text(trace: tuple[dict, ...], language: Language) -> str:
    header = "**How I found this**" if language == "en" else "**检索过程**"
    lines = [header, ""]
    number = 0
    for step in trace:
        ms = step.get("duration_ms")
        took = f" ({ms:.0f} ms)" if isinstance(ms, (int, float)) else ""
        if step.get("kind") == "model":
            tokens = step.get("tokens") or {}
            used = ", ".join(f"{k} {v}" for k, v in tokens.items() if v)
            label = "model turn" if language == "en" else "模型推理"
            lines.append(f"- _{label}: {step.get('tool', '?')}{took}{'; ' + used if used else ''}_")
            continue
        number += 1
        args = ", ".join(f"{k}={v!r}" for k, v in (step.get("arguments") or {}).items())
        status = "" if step.get("ok", True) else (" — failed" if language == "en" else " — 失败")
        cached = (" (cached)" if language == "en" else "（缓存）") if step.get("cached") else ""
        lines.append(f"{number}. `{step.get('tool', '?')}`({args}){took}{cached}{status}")
    return "\n".join(lines)
