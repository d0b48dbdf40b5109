"""Mistral chat completions (hosted API): the OpenAI dialect with Mistral's validator."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider

PROFILE = Provider(
    id="mistral",
    order=40,
    title="Mistral chat completions",
    docs="https://docs.mistral.ai/api/",
    rule_prefix="M",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    bridges_tool_to_user=True,
    short_tool_call_ids=True,
    names_tool_results=True,
    marks_prefill=True,
    image_url_as_string=True,
    # A PDF as a `document_url` part, by URL or as a data: URL
    # (https://docs.mistral.ai/capabilities/document_ai/; https://github.com/pydantic/pydantic-ai/pull/2267).
    inline_files={"document": "document_url"},
    linked_files={"document": "document_url"},
    check_levels={
        "payload.system_first": CheckLevel(
            WARNING, "the hosted API accepts several system messages anywhere; its role order is "
                     "provider_rules' M1"),
        "payload.user_led": CheckLevel(WARNING, "answers a payload that does not lead with a user turn"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "'Not the same number of function calls and responses' (mistral-common's validator)",
            rule="M4"),
    },
    reused_call_id=CheckLevel(
        ERROR, "'Duplicate tool call id' (mistral-common's V13 validator)", rule="M5"),
)
