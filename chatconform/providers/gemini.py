"""Google Gemini generateContent: ``contents`` of user and model turns, ``systemInstruction``."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="gemini",
    order=60,
    title="Google Gemini generateContent",
    # Any file as `inlineData` bytes or `fileData` by URI, with its MIME type
    # (https://ai.google.dev/gemini-api/docs/document-processing, .../audio, .../video-understanding).
    inline_files={"document": "inlineData", "audio": "inlineData", "video": "inlineData"},
    linked_files={"document": "fileData", "audio": "fileData", "video": "fileData"},
    docs="https://ai.google.dev/api/generate-content",
    rule_prefix="G",
    dialect="gemini_generate",
    messages_key="contents",
    system_slot="systemInstruction",
    merges_turns=True,
    keeps_results_apart=True,
    check_levels={
        "payload.system_first": CheckLevel(
            ERROR, "roles are user and model; system text goes in `systemInstruction`", rule="G3"),
        "payload.user_led": CheckLevel(WARNING, "answers a payload that does not lead with a user turn"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "'Please ensure that the number of function response parts is equal to the number of "
                   "function call parts of the function call turn.'", rule="G8"),
    },
    reused_call_id=CheckLevel(WARNING, "pairs each function-call turn with the turn right after it"),
    error_flag='an `error` key in functionResponse.response',
    # A thoughtSignature goes back on the part it came with
    # (https://ai.google.dev/gemini-api/docs/thought-signatures); pydantic-ai names the
    # Gemini API and Vertex AI so.
    reasoning_slot="thought_signatures",
    reasoning_signers=frozenset({"google-gla", "google-vertex", "google"}),
    reasoning_families=(
        # Gemini 2.5 returns signatures and takes them back, and answers a function call sent
        # without its signature; only Gemini 3 rejects that (the page above: "Gemini 3 ... strict
        # validation"). The last family is the one for a model not known: the strict one.
        ReasoningFamily("gemini-2.5 and earlier", r"gemini-(1|2)\.", "taken", "tool_turns", rule="G9",
                        evidence="https://ai.google.dev/gemini-api/docs/thought-signatures", date="2025-11"),
        ReasoningFamily("gemini-3 and later", r"gemini", "required", "tool_turns", rule="G9",
                        evidence="https://github.com/langchain-ai/langchain-google/issues/1364", date="2025-11",
                        example="gemini-3-pro-preview"),
    ),
)
