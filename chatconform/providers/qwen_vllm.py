"""Qwen3.5+ served by vLLM: the OpenAI dialect, checked by Qwen's chat template."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider

PROFILE = Provider(
    id="qwen-vllm",
    order=20,
    title="Qwen3.5+ chat template served by vLLM",
    # The template takes text, images and videos (Q5); vLLM reads a `video_url` as a link or a
    # data: URL (https://docs.vllm.ai/en/latest/features/multimodal_inputs.html).
    inline_files={"video": "video_url"},
    linked_files={"video": "video_url"},
    docs="https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html",
    rule_prefix="Q",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    escapes_tool_response_text=True,
    check_levels={
        "payload.system_first": CheckLevel(
            ERROR, "'System message must be at the beginning.' "
                   "(https://github.com/vllm-project/vllm/issues/41114)", rule="Q3"),
        "payload.user_led": CheckLevel(ERROR, "'No user query found in messages.'", rule="Q2"),
        "payload.tool_pairing": CheckLevel(
            WARNING, "vLLM validates no pairing of tool calls and results, and Qwen's chat template renders "
                     "tool messages wherever they are"),
    },
    reused_call_id=CheckLevel(WARNING, "vLLM pairs each round's tool messages with that round's calls"),
    # vLLM's reasoning parsers (qwen3) return the thinking beside the content.
    answer_reasoning="reasoning_content",
)
