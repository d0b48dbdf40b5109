"""DeepSeek's chat completions: the OpenAI dialect, with ``reasoning_content`` rules that
depend on the model (R1 rejects it in the history, the thinking mode of V3.2 and later needs it)."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="deepseek",
    order=35,
    title="DeepSeek chat completions",
    docs="https://api-docs.deepseek.com/api/create-chat-completion",
    rule_prefix="D",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "no known DeepSeek rule on where system messages go"),
        "payload.user_led": CheckLevel(WARNING, "no known DeepSeek rule on the first turn of V3.2 and later"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "'An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   "'tool_call_id'. (insufficient tool messages following tool_calls message)'", rule="D1"),
    },
    reused_call_id=CheckLevel(WARNING, "pairs each tool message with the calls right before it"),
    api_paths=("/chat/completions",),
    reasoning_slot="reasoning_content",
    reasoning_signers=frozenset({"deepseek"}),
    reasoning_families=(
        # https://api-docs.deepseek.com/guides/reasoning_model: "if reasoning_content is in the
        # input messages, the API returns a 400 error" (deepseek-reasoner when it was R1).
        ReasoningFamily("deepseek-r1 (the deepseek-reasoner of early 2025)", r"deepseek-r1|\br1\b", "rejected",
                        "tool_turns", rule="D2", evidence="https://github.com/vercel/ai/pull/14739", date="2025-02",
                        example="deepseek-r1"),
        # https://api-docs.deepseek.com/guides/thinking_mode: the reasoning_content of a turn that
        # called tools must be passed back in every later request.
        ReasoningFamily("deepseek-chat and deepseek-reasoner (V3.2), deepseek-v4 in thinking mode", r"deepseek",
                        "required", "tool_turns", rule="D3",
                        evidence="https://github.com/langchain-ai/langchain/issues/34166", date="2026-05",
                        example="deepseek-v4-pro"),
    ),
    answer_reasoning="reasoning_content",
)
