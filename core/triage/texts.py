"""The fixed wording of offline answers, in English and Chinese (Markdown)."""
from __future__ import annotations

from core.messages import Language

T: dict[str, tuple[str, str]] = {
    "conclusion": ("**Conclusion:** ", "**结论：**"),
    "keyed": ("Read from your log: `{line}`", "依据你日志中的这一行：`{line}`"),
    # after a resolved thread led: the knowledge base's pattern is the next thing to check, not the verdict
    "maybe": ("**Possibly related:** ", "**可能相关：**"),
    "otherwise": ("**If that does not fit:** ", "**如果不是上述情况：**"),
    "c_version": (
        "Version misalignment: vllm-ascend {va} belongs to the matrix row with vLLM {expected}, but you run vLLM {found}. "
        "Align both to one row before debugging anything else.",
        "版本不配套：vllm-ascend {va} 在兼容矩阵中对应 vLLM {expected}，而你使用的是 vLLM {found}。请先把二者对齐到同一行，再排查其他问题。",
    ),
    "c_incompat": ("Your setup hits a combination known to break on vllm-ascend: {title} (workaround below).", "你的配置命中了 vllm-ascend 上已知有问题的组合：{title}（规避方法见下）。"),
    "c_chip": ("Your hardware ({chip}) is not supported by vllm-ascend, so this setup is expected to fail.", "你的硬件（{chip}）不被 vllm-ascend 支持，这种配置本身就无法正常工作。"),
    "c_code": ("Error {code} ({name}) points to {layer}.", "错误码 {code}（{name}）指向{layer}。"),
    "c_other_version": (
        "Your {component} {found} differs from the {expected} in the matrix row of vllm-ascend {va}; align it first.",
        "你的 {component} {found} 与 vllm-ascend {va} 所在矩阵行的 {expected} 不一致；请先对齐。",
    ),
    "c_chip_release": (
        "vllm-ascend {va} does not support your hardware ({found}); support is in {expected}. Move to such a release first.",
        "vllm-ascend {va} 不支持你的硬件（{found}）；支持的版本为 {expected}。请先换到这样的版本。",
    ),
    "c_image_release": (
        "The image you run ({found}) is built for another chip; yours needs {expected}. Switch the image first.",
        "你使用的镜像（{found}）是为其他芯片构建的；你的芯片需要 {expected}。请先更换镜像。",
    ),
    # zh: no bold title right after the bold label ("**可能相关：****…**" would break the Markdown)
    "c_pattern": ("**{title}**: common causes are {causes}.", "【{title}】：常见原因是{causes}。"),
    "nothing_with_lookups": (
        "No known failure signature matched; here is what the knowledge base has on what you mention.",
        "没有匹配到已知的故障特征；以下是知识库中与你提到的内容相关的信息。",
    ),
    "lookups_intro": (
        "Here is what the built-in knowledge base has on what you mention.",
        "以下是内置知识库中与你提到的内容相关的信息。",
    ),
    "c_fact": ("This matches a known issue: **{title}** (details below).", "这符合一个已知问题：**{title}**（详见下文）。"),
    "nothing": (
        "Nothing in the built-in knowledge base matched this question specifically.",
        "内置知识库中没有与这个问题具体匹配的内容。",
    ),
    "nothing_passages": ("No indexed passage was available for this question.", "没有可用的索引段落。"),
    "or": (" or ", "或"),
    "list_sep": ("; ", "；"),
    "colon": (": ", "："),
    "lookups": ("**What the knowledge base says:**", "**知识库中的相关信息：**"),
    "steps": ("**Next steps:**", "**下一步：**"),
    "where": ("**Where to look in the code:**", "**代码位置：**"),
    "passages": ("**Related passages:**", "**相关段落：**"),
    "release_changes": ("**Since your release:**", "**您的版本之后的变化：**"),
    "release_lead": ("**For your release:**", "**就您的版本而言：**"),
    "release_general": ("**In the release notes** (your release was not named):", "**发布说明中的相关内容**（未提供您的版本）："),
    "as_of": ("as of {tag}", "以 {tag} 为准"),
    "more": ("**More:** ", "**更多：**"),
    "details_hint": (
        "_Send `details` for the full checklist and the list of what to send._",
        "_发送 `详细` 查看完整排查清单和需要提供的信息。_",
    ),
    "footer": (
        "_Offline answer from the built-in knowledge base; full research needs a model (`ANTHROPIC_API_KEY` or an OpenAI-compatible `OPENAI_BASE_URL`)._",
        "_以上为基于内置知识库的离线回答；完整研究需要配置模型（`ANTHROPIC_API_KEY` 或 OpenAI 兼容的 `OPENAI_BASE_URL`）。_",
    ),
    "product_heading": ("**{name}:**", "**{name}：**"),
    # lookups
    "env_var": ("`{name}` ({scope}): {purpose}", "`{name}`（{scope}）：{purpose}"),
    "env_user_value": (" Its value depends on your setup.", "取值取决于你的环境。"),
    "code_line": ("`{code}` {name}: {meaning}", "`{code}` {name}：{meaning}"),
    "code_unknown": (
        "`{code}`: not in the built-in table; search the product's issues for it together with the operator or model name.",
        "`{code}`：不在内置错误码表中；请在该产品的 issue 中用该错误码加算子名或模型名搜索。",
    ),
    "incompat_line": ("**{title}**: {explanation} Workaround: {workaround}", "**{title}**：{explanation}规避方法：{workaround}"),
    "chip_family": ("{id} = {family} ({products})", "{id} = {family}（{products}）"),
    "chip_notes": ("{id} ({family}) on vllm-ascend, {support}: {notes}", "{id}（{family}）在 vllm-ascend 上{support}：{notes}"),
    "support_supported": ("supported", "支持"),
    "support_experimental": ("experimental", "实验性支持"),
    "support_unsupported": ("not supported", "不支持"),
    "support_images": ("images available", "已有镜像"),
    "v_match": ("vLLM {found} and vllm-ascend {va} are in the same matrix row.", "vLLM {found} 与 vllm-ascend {va} 在兼容矩阵同一行。"),
    "v_mismatch_vllm": (
        "**Mismatch:** vllm-ascend {va} pairs with vLLM **{expected}**, you have vLLM **{found}**. That row also pins {row}.",
        "**不配套：**vllm-ascend {va} 对应 vLLM **{expected}**，你使用的是 vLLM **{found}**。该行还固定了 {row}。",
    ),
    "v_match_other": ("{component} {found} matches the row of vllm-ascend {va}.", "{component} {found} 与 vllm-ascend {va} 所在行一致。"),
    "v_mismatch_other": (
        "**Mismatch:** {component} {found} differs from **{expected}** in the row of vllm-ascend {va}.",
        "**不一致：**{component} {found} 与 vllm-ascend {va} 所在行的 **{expected}** 不同。",
    ),
    "v_python_from": ("Python {found} is supported from vllm-ascend **v{va}** on (vLLM {vllm}; Python >={pmin},<{pmax}): upgrade to it, or use a Python in your row's range.",
                      "Python {found} 从 vllm-ascend **v{va}** 起支持（vLLM {vllm}；Python >={pmin},<{pmax}）：升级到该版本，或改用本行范围内的 Python。"),
    "v_python_until": ("Python {found} is supported up to vllm-ascend **v{va}** (vLLM {vllm}; Python >={pmin},<{pmax}): stay on that release, or move to a Python in your row's range.",
                       "Python {found} 最多支持到 vllm-ascend **v{va}**（vLLM {vllm}；Python >={pmin},<{pmax}）：停留在该版本，或换用本行范围内的 Python。"),
    "v_python": ("**Mismatch:** Python {found} is outside {expected} required by vllm-ascend {va}.", "**不满足：**Python {found} 不在 vllm-ascend {va} 要求的 {expected} 范围内。"),
    "v_python_ok": ("Python {found} is within {expected}.", "Python {found} 在 {expected} 范围内。"),
    "v_unknown": (
        "vllm-ascend {found} has no documented row in the matrix we hold (read from {where}; it covers v{oldest} to v{newest}); check the release notes and the versioning policy instead of guessing.",
        "我们收录的兼容矩阵中没有 vllm-ascend {found} 的记录（读取自 {where}，覆盖 v{oldest} 至 v{newest}）；请查看 release notes 和版本策略文档，不要猜测。",
    ),
    "v_main_vllm": (
        "main is tested against one vLLM commit ({commit}), not a vLLM release; you have vLLM {found}.",
        "main 只针对一个 vLLM commit（{commit}）测试，而不是某个 vLLM 发布版；你使用的是 vLLM {found}。",
    ),
    "v_chip_release": (
        "**Not supported in this release:** {found} on vllm-ascend {va}; support is in {expected}.",
        "**该版本不支持：**vllm-ascend {va} 不支持 {found}；支持的版本为 {expected}。",
    ),
    "v_image": (
        "**Image mismatch:** {found} is built for another chip; yours needs {expected}.",
        "**镜像不匹配：**{found} 是为其他芯片构建的；你的芯片需要 {expected}。",
    ),
    "v_kind_post": ("vllm-ascend {found} is a post release of v{va}: the v{va} row holds.", "vllm-ascend {found} 是 v{va} 的 post 版本：适用 v{va} 这一行。"),
    "v_kind_dev": (
        "vllm-ascend {found} is a development build, not a release: no row pins it; checked against {target}.",
        "vllm-ascend {found} 是开发构建而非发布版：矩阵中没有固定它的行；以下按{target}核对。",
    ),
    "v_target_row": ("the row of v{va}, the release it leads to", " v{va} 这一行（它通向的发布版）"),
    "v_target_main": ("main's targets (it is newer than every row)", " main 的目标版本（它比所有行都新）"),
    "v_kind_main": (
        "main has no release row: it is built against vLLM commit {commit} with {row} (as of {as_of}); checked against those.",
        "main 没有发布版对应的行：它基于 vLLM commit {commit}，以及 {row}（截至 {as_of}）；以下按这些核对。",
    ),
    "v_differs": ("**Differs from the {own} row:** {fields}.", "**与 {own} 这一行不一致：**{fields}。"),
    "v_move": (
        "Your other versions fit the row of vllm-ascend **v{va}** (vLLM {vllm}; {row}): move vllm-ascend to v{va}, or move {fields} to the {own} row.",
        "你的其他版本符合 vllm-ascend **v{va}** 这一行（vLLM {vllm}；{row}）：把 vllm-ascend 换成 v{va}，或把 {fields} 换成 {own} 这一行的版本。",
    ),
    "v_stay": ("To stay on the {own} row, move to {changes}.", "要保持 {own} 这一行，请改为 {changes}。"),
    "v_row": ("vllm-ascend {va} pairs with vLLM **{expected}**; its row pins {row}.", "vllm-ascend {va} 对应 vLLM **{expected}**；该行固定了 {row}。"),
    "v_info": ("vLLM {found} appears in the matrix rows of vllm-ascend {expected}.", "vLLM {found} 出现在 vllm-ascend {expected} 所在的矩阵行中。"),
    "v_no_row": (
        "{found} has no documented row in the matrix we hold, neither as a vllm-ascend nor as a vLLM version; check the release notes instead of guessing.",
        "我们收录的兼容矩阵中没有 {found} 的记录（无论作为 vllm-ascend 还是 vLLM 版本）；请查看 release notes，不要猜测。",
    ),
    "v_line_rows": (
        "{found} itself has no row in the matrix we hold; the rows of that release line are {rows}.",
        "我们收录的兼容矩阵中没有 {found} 本身的记录；该版本线的记录为 {rows}。",
    ),
    "v_policy": ("Rule: {text}", "规则：{text}"),
    "row": ("CANN {cann}, torch {torch} / torch_npu {torch_npu}, Python >={pmin},<{pmax}", "CANN {cann}、torch {torch} / torch_npu {torch_npu}、Python >={pmin},<{pmax}"),
    # details
    "details_title": ("**Full checklist and what to send**", "**完整排查清单与需要提供的信息**"),
    "checklist_heading": ("### Quick diagnostic checklist", "### 快速排查清单"),
    "send_heading": ("### What to send", "### 请提供以下信息"),
    "send_collect_env": ("Output of `{command}`. {where} Fields that matter: {fields}.", "`{command}` 的输出。{where}重点字段：{fields}。"),
    "no_checklist": ("No checklist entry applies to {repos}.", "没有适用于 {repos} 的排查清单条目。"),
    # research-tool report
    "signals_none": ("Signals: none detected.", "识别信息：无。"),
    "signals_prefix": ("Signals: ", "识别信息："),
    "applies_to": ("(applies to {products})", "（适用于 {products}）"),
    "all_ascend": ("every Ascend product, not upstream vLLM", "所有昇腾产品，不含上游 vLLM"),
    "no_findings": (
        "No known error code, problem pattern, incompatible combination or version issue matched.",
        "没有匹配到已知的错误码、问题类型、不兼容组合或版本问题。",
    ),
    "sources_heading": ("Sources:", "来源："),
    "patterns_heading": ("Likely problem patterns:", "可能的问题类型："),
    "causes": ("Likely causes: {text}.", "可能原因：{text}。"),
    "sep": (" · ", " · "),
    "chips": ("chip", "芯片"),
    "codes": ("error codes", "错误码"),
}


class Text:
    """Looks up a template in the answer's language."""

    def __init__(self, language: Language) -> None:
        self.language: Language = "zh" if language == "zh" else "en"
        self.index = 1 if self.language == "zh" else 0

    def __call__(self, key: str, **values: object) -> str:
        return T[key][self.index].format(**values)
