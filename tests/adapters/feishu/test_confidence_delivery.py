"""The confidence line reaches a real Feishu delivery (the responder's card), not only the renderer."""
from core.confidence import Confidence, NextStep
from core.messages import Reply, ReplyKind
from tests.adapters.feishu.test_responder import api, fake, make  # noqa: F401 - fixtures

TRACKER = "https://gitcode.com/Ascend/MindIE-LLM/issues"


async def test_the_delivered_answer_card_ends_with_the_confidence_line(fake, api, redis, keys):  # noqa: F811
    low = Confidence("low", "nothing", (NextStep("upstream", "MindIE-LLM", TRACKER),))
    await make(api, redis, keys).finish(Reply(ReplyKind.ANSWER, "**Answer**: check the logs.", "zh", confidence=low))
    [card] = fake.replies_to("om_q")
    shown = fake.visible_text(card)
    assert shown.startswith("**Answer**: check the logs.\n\n🔴 **置信度：低**（没有找到具体匹配的信息）")
    assert f"或向上游提问：[MindIE-LLM]({TRACKER})" in shown and not fake.violations
