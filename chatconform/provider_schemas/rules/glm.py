"""Z.ai GLM: OpenAI's tool pairing plus unique call ids (Z2), every problem answered with 1214."""

from __future__ import annotations

from chatconform.providers.glm import GLM_1214, GLM_TEXT_ONLY

from .common import CONTENT, SCHEMA, SEQUENCE, Report, RuleInfo, as_list, rules, tool_pairing


def check(body: dict, report: Report) -> None:
    # Z2: OpenAI's pairing plus duplicate tool-call ids, all answered with error 1214.
    tool_pairing(
        as_list(body.get("messages")),
        lambda kind, parts, detail: report.error("Z2", parts, GLM_1214),
        duplicates=True,
    )


CATALOG = rules(
    RuleInfo(
        "Z0", "documented message shape (error 1214)", SCHEMA,
        GLM_1214, "https://docs.z.ai/api-reference/llm/chat-completion",
    ),
    RuleInfo(
        "Z1", "at least one user message (error 1214)", SCHEMA,
        GLM_1214, "https://github.com/HKUDS/nanobot/pull/3086",
    ),
    RuleInfo(
        "Z2", "tool messages pair with tool_calls as on OpenAI; no duplicate ids (error 1214)", SEQUENCE,
        GLM_1214, "https://github.com/lobehub/lobehub/issues/11408",
    ),
    RuleInfo(
        "Z3", "a named GLM text model takes text parts only (the vision models, glm-*v, take images)", CONTENT,
        GLM_TEXT_ONLY, "https://github.com/BigPizzaV3/CodexPlusPlus/issues/1760",
    ),
)

LEFT_OUT: dict[str, str] = {
    "Z4": "no evidence of a GLM system-position rule",
    "Z5": "legacy ChatGLM history parameter",
}
