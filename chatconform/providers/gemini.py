"""Google Gemini generateContent: ``contents`` of user and model turns, ``systemInstruction``."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider

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
)
