"""langchain-aws's ``ChatBedrockConverse`` as a ``to_payload`` implementation for
``bedrock-converse``, run offline.

``to_payload(history, provider="bedrock-converse", instructions=...)`` returns the JSON body
of the Converse request that::

    ChatBedrockConverse(model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                        region_name="us-east-1", aws_access_key_id="dummy",
                        aws_secret_access_key="dummy").bind_tools(tools).invoke(messages)

puts on the wire, parsed back from its JSON:

- ``messages``: the history as a LangChain application holds it
  (:func:`chatconform.adapters.langchain_core.to_langchain`, one message per part, in
  order), the run's instructions first as a ``SystemMessage``;
- ``tools``: each tool the history calls, bound as an application binds a tool whose schema
  it does not constrain (the OpenAI function format, an open object schema), which
  langchain-aws sends as ``toolConfig``; none bound when the history calls none.

The call runs ChatBedrockConverse's whole invoke path: langchain-core's message
normalization, ``_messages_to_bedrock`` (Converse blocks, consecutive same-role messages
merged, system messages lifted into ``system``), ``_converse_params``, then
``client.converse(...)`` of boto3, which validates the parameters against the service
model (botocore's ``ParamValidator``: the client's ``parameter_validation`` is on, as by
default), serializes them with the service's rest-json serializer (bytes as base64) and
signs the request with the dummy credentials. The request is stopped by a
``before-send.bedrock-runtime.Converse`` handler, after all of that and before anything
is sent, so no socket is opened; the handler's exception carries the body out. The model
id travels in the URL (``/model/{modelId}/converse``), not in the body, so the adapter
names it in ``models`` for the model-dependent rules.

Nothing is fixed up. A ``ParamValidationError`` botocore raises, or a ``ValueError``
langchain-aws raises for a block it cannot convert, is the library's own rejection and
propagates (the suite reports it as a crash).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from chatconform.adapters import Library
from chatconform.errors import MissingDependency

if TYPE_CHECKING:
    from langchain_aws import ChatBedrockConverse

__all__ = ["DISTRIBUTION", "EXTRA", "MODEL", "LangChainAWSAdapter"]

#: The extra that installs langchain-aws (and langchain-core, boto3 with it).
EXTRA = "langchain-aws"
#: The distribution whose version the adapter reports.
DISTRIBUTION = "langchain-aws"
#: The Bedrock model (a cross-region inference profile of Claude Sonnet 4.5).
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

if importlib.util.find_spec("langchain_aws") is None or importlib.util.find_spec("boto3") is None:
    raise MissingDependency(f"the langchain-aws adapter needs langchain-aws and boto3: "
                            f"pip install 'chatconform[{EXTRA}]'")

from chatconform.adapters._langchain_chat import ChatModelAdapter, Sent  # noqa: E402

#: langchain-aws (and boto3 through it), imported when the chat model is built (by warm_up, or else the first call).
_library = Library("langchain_aws", adapter="langchain-aws", extra=EXTRA)


def _stop_before_sending(request: Any, **kwargs: Any) -> None:
    """botocore's ``before-send`` handler: called with the validated, serialized and signed
    request right before the endpoint would send it."""
    raise Sent(request.body)


class LangChainAWSAdapter(ChatModelAdapter):
    """``to_payload`` for ``bedrock-converse`` through ``ChatBedrockConverse``'s own invoke
    path and botocore's validation and serializer (see the module docstring)."""

    name = "langchain-aws"
    distribution = DISTRIBUTION
    providers = frozenset({"bedrock-converse"})
    #: The model the request names (in its URL), so model-dependent rules are judged for it.
    models = {"bedrock-converse": MODEL}
    #: What ChatBedrockConverse gets wrong (docs/adapters.md has the minimal case). A prompt that is
    #: only a PDF, sent as a document block with no text block (B7, 'A text block must be included
    #: when using documents.'), is wrong too, but the ci stream no longer draws one (docs/precision.md).
    expected_failures = {
        "payload.tool_pairing": (
            "calls cut off while their tools ran (no result stored) are sent as toolUse blocks with no "
            "toolResult after them: langchain-aws converts the messages as stored and closes no call, and "
            "Converse rejects the request: B4, '`tool_use` ids were found without `tool_result` blocks "
            "immediately after'"),
        "payload.provider_rules": "the same calls as payload.tool_pairing: B4",
    }

    def chat_model(self) -> ChatBedrockConverse:
        model = _library.ChatBedrockConverse(model=MODEL, region_name="us-east-1", aws_access_key_id="dummy",
                                             aws_secret_access_key="dummy")
        model.client.meta.events.register("before-send.bedrock-runtime.Converse", _stop_before_sending)
        return model
