"""Z.ai / Zhipu GLM: the OpenAI dialect, every invalid body answered with error 1214."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, ModelContent, Provider

#: Z.ai answers every invalid ``messages`` shape with the same 1214 error.
GLM_1214 = "The messages parameter is illegal. Please check the documentation."
#: A text model's answer to any part that is not text.
GLM_TEXT_ONLY = "messages.content.type 参数非法\uff0c取值范围 ['text']"  # a full-width comma, as sent

PROFILE = Provider(
    id="glm",
    order=30,
    title="Z.ai / Zhipu GLM chat completions",
    docs="https://docs.z.ai/api-reference/llm/chat-completion",
    rule_prefix="Z",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    blanket_error=GLM_1214,
    error_code="1214",
    api_paths=("/api/paas/v4/chat/completions",),
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "no known GLM rule on where system messages go"),
        "payload.user_led": CheckLevel(
            ERROR, "1214 after compaction sent the summary as system and left no user message "
                   "(https://github.com/HKUDS/nanobot/pull/3086)", rule="Z1"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "1214 on tool messages that do not pair with tool_calls as on OpenAI", rule="Z2"),
    },
    reused_call_id=CheckLevel(
        ERROR, "1214 on a duplicate call id (https://github.com/MetaGLM/zhipuai-sdk-python-v4/issues/14)",
        rule="Z2"),
    model_content=(
        ModelContent("the GLM vision models (glm-4v, glm-4.5v and later v)", r"^glm-[0-9.]+v",
                     frozenset({"image", "video", "document"}), "https://docs.z.ai/guides/vlm/glm-4.5v", "2026-08"),
        ModelContent("the GLM text models", r"^glm-", frozenset(),
                     "https://github.com/BigPizzaV3/CodexPlusPlus/issues/1760", "2026-05"),
    ),
    content_refusals={kind: GLM_TEXT_ONLY for kind in ("image", "video", "document", "audio")},
    content_rule="Z3",
    # GLM-4.5 and later return their thinking beside the content.
    answer_reasoning="reasoning_content",
)
