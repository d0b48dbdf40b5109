"""OpenAI Responses API: ``input`` items paired by ``call_id``, reasoning items replayed whole."""

from chatconform.errors import WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="openai-responses",
    order=15,
    title="OpenAI Responses API",
    # PDF files as `input_file` parts, as bytes (file_data) or by URL (file_url); no audio or video
    # in an input message (https://platform.openai.com/docs/guides/pdf-files?api-mode=responses).
    inline_files={"document": "input_file"},
    linked_files={"document": "input_file"},
    docs="https://platform.openai.com/docs/api-reference/responses/create",
    rule_prefix="X",
    dialect="openai_responses",
    messages_key="input",
    system_slot="instructions",
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "takes system and developer messages anywhere in `input`"),
        "payload.user_led": CheckLevel(WARNING, "answers an `input` that does not lead with a user message"),
        # The API pairs an output with its call by call_id wherever it stands; what it refuses, a call
        # never answered (X3) and an output without its call (X4), payload.provider_rules judges.
        "payload.tool_pairing": CheckLevel(
            WARNING, "pairs function_call_output items with their calls by call_id, wherever they stand; an "
                     "unanswered call (X3) or an output without its call (X4) is judged by its rule"),
    },
    reused_call_id=CheckLevel(WARNING, "pairs outputs by call_id; no rejection of a reused call_id recorded"),
    reasoning_slot="reasoning_items",
    reasoning_signers=frozenset({"openai"}),
    reasoning_families=(
        # https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context: with
        # store=false, pass the reasoning items back with their encrypted content; the API answers
        # without them (the model loses the reasoning), and rejects one sent wrong (X5, X6).
        ReasoningFamily("every reasoning model (o-series, gpt-5, codex)", r".", "taken", "tool_turns", rule="X5",
                        evidence="https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context",
                        date="2026-05", example="gpt-5"),
    ),
)
