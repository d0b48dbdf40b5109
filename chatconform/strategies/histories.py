"""pydantic-ai histories grown from simulated agent runs.

A history is played turn by turn, the way an agent run writes it: a request holding the
user's prompt, then model responses and tool rounds (calls, then a request with their
results), then a final answer. On top of that come the things real stored histories
hold: leading and mid-conversation system prompts, images, thinking, failed / denied /
retried tool results, output-validation retry feedback, a compaction summary as
pydantic-ai-harness 0.62 stores it, runs that were cancelled (``state="interrupted"``)
and continued, and optionally a dangling tail.

Text items come plain or in the shapes real bugs trip on (padding, emoji and combining
characters, thousands of characters, JSON, role markers, frame tags), and blank items sit
beside other content. About one example in eight holds a bulk section of hundreds of
turns played by a seeded PRNG through the same code (see
:mod:`chatconform.strategies.choices`), so histories of thousands of messages come up.

Everything is valid by construction (no ``.filter``), deterministic (fixed clock plus
drawn offsets, UTC) and JSON round-trippable through ``ModelMessagesTypeAdapter``
(lists, never tuples; JSON-native tool content; ``BinaryImage`` rather than
``BinaryContent``). Every non-blank text item carries a unique tag such as ``(u3)`` so a
check can find each piece in a provider payload. Tool call ids come in providers' shapes
(``call_7``, ``toolu_…``, 9 and 10+ alphanumerics, 64 characters) and are unique within
a response; a tool round may come from another model than the one before (a
conversation continued on another provider) and write its ids its own way; with
``reused_call_ids`` a later round may reuse an earlier round's id, as some
OpenAI-compatible servers do, each call still answered by the request after it. Each
example switches some features off (swarm testing), and everything
shrinks toward a single plain user prompt: the bulk section goes first, then features,
then each choice to its first option.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from chatconform.history import SUMMARY_METADATA_KEY
from chatconform.lazy import pai
from chatconform.strategies.choices import Bulk, Chooser, DrawChooser, bulk_window
from chatconform.strategies.validation import check_bool, check_int

if TYPE_CHECKING:
    from pydantic_ai.messages import (
        FinishReason,
        ModelMessage,
        ModelRequestState,
        ModelResponsePart,
        ModelResponseState,
        RetryFeedbackCause,
        RetryInfo,
        SystemPromptPart,
        ThinkingPart,
        ToolCallPart,
        ToolRetryCause,
        ToolReturnPart,
        UserPromptPart,
    )

__all__ = ["SUMMARY_METADATA_KEY", "histories", "instructions"]

HISTORY_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


_SYSTEM_PROMPT_MODES = ("leading", "anywhere", "none")

# Small vocabularies; the first entry of each is what shrinking goes to. Every text item
# gets a tag "(<letter><n>)" with n unique in the history, so no item is a substring of
# another. The phrases are plain; the odd shapes come from SHAPES.
PHRASES = {
    "system": ("You are a helpful assistant.", "Answer in English.", "Use the tools when they help.",
               "Keep answers short.", "Never reveal internal ids.", "Réponds poliment."),
    "user": ("Hello", "What is the weather in Paris?", "Summarize the report.", "List the open tickets.",
             "Why did the build fail?", "Compare both plans.\nKeep it brief.", "Résumé du café, s'il te plaît.",
             "请总结这份文件"),
    "steer": ("Also check Berlin.", "Stop after the first result.", "Use metric units."),
    "assistant": ("Done.", "Here is what I found.", "It is sunny and 21 C.", "The build failed on step 3.",
                  "Two tickets are open:\n- login\n- export", "Voilà le résumé.", "已完成"),
    "thinking": ("Let me think.", "I should call a tool first.", "The user wants a short answer."),
    "result": ("ok", "sunny, 21 C", "3 rows", "no matches", "file has 42 lines", "température 18 C"),
    "error": ("Tool failed: timeout", "Permission error", "Connection reset"),
    "denied": ("The user denied this tool call.",),
    "retried": ("Invalid arguments: field city is required. Fix the errors and try again.",),
    "feedback": ("Output validation failed: expected a number. Fix the errors and try again.",
                 "Please return a final answer."),
    "summary": ("Summary: the user asked about the weather and two cities were checked.",
                "Summary: the build failed; the log was read and a fix was proposed.",
                "Résumé: the user and the assistant compared both plans."),
    "instructions": ("Be concise.", "Answer in the user's language.", "Cite the tool results you use.",
                     "Use bullet points.\nNo more than five."),
}


def _long(phrase: str, tag: str) -> str:
    return (phrase + " ") * (4_000 // (len(phrase) + 1) + 1) + tag


def _json_like(phrase: str, tag: str) -> str:
    return json.dumps({"role": "system", "content": f"{phrase} {tag}"})


# How a text item is written around its phrase and tag: a template, or a function for the
# shapes a template cannot say. The plain shape is first, so shrinking goes to it; every
# shape keeps the tag intact.
_PLAIN = "{phrase} {tag}"
_PADDED = "\n  {phrase} {tag}\n\n "  # whitespace and newlines at both edges
# An emoji with a variation selector, "é" as e + combining acute, a ZWJ sequence (woman
# technologist) and a right-to-left word.
_UNICODE = "{phrase} \u2615\ufe0f cafe\u0301 \U0001f469\u200d\U0001f4bb \u05e9\u05dc\u05d5\u05dd {tag}"
# Role markers of chat templates, and frame tags some frameworks add themselves.
_MARKERS = ("<|im_start|>system\n{phrase} {tag}<|im_end|>", "Human: {phrase} {tag}",
            "\n\nAssistant: {phrase} {tag}", "<system>obey</system> {phrase} {tag}",
            "<tool_response>{phrase} {tag}</tool_response>", "<thinking>{phrase}</thinking> {tag}")
SHAPES = (_PLAIN.format, _PADDED.format, _UNICODE.format, _long, _json_like,
           *(template.format for template in _MARKERS))
_BULK_ODD_TEXT_ODDS = 10
BLANKS = ("", " ", "  \n", "\n\n", "\t")

TAG_LETTER = {"system": "s", "user": "u", "steer": "u", "assistant": "a", "thinking": "t", "result": "r",
               "error": "r", "denied": "r", "retried": "r", "feedback": "f", "summary": "c"}

# tool name -> (argument name, sample values); names satisfy every provider's name rules.
TOOL_NAMES = {
    "get_weather": ("city", ("Paris", "Berlin", "Tokyo")),
    "search_docs": ("query", ("refund policy", "release notes")),
    "read_file": ("path", ("README.md", "src/app.py")),
    "run_sql": ("sql", ("select count(*) from tickets",)),
}
# How call ids are written, n unique per call: OpenAI, Anthropic, pydantic-ai and Gemini
# style, then the lengths id rules trip on: 9 alphanumerics (Mistral's own), 10
# alphanumerics (one too many for Mistral), dashes and underscores, 64 characters (the
# Bedrock maximum).
_ID_STYLES = ("call_{n}", "toolu_{n}", "pyd_ai_{n}", "fc-{n}", "toolu_01{n:056d}", "aB{n:07d}", "call{n:06d}",
              "tool-use_{n}-x_y")
#: How many recently answered ids a reused id is drawn from (servers restart their count).
_REUSABLE_IDS = 8
_MODEL_NAMES = ("test-model", "gpt-5-mini", "claude-sonnet-4-5", "gemini-2.5-flash")
#: What a tool call's result says of the call (``ToolReturnPart.outcome``).
_Outcome = Literal["success", "failed", "denied", "interrupted", "retried"]
_OUTCOMES: tuple[_Outcome, ...] = ("success", "failed", "denied")
_IMAGE_WORDS = ("cat", "chart", "receipt")

# A valid 1x1 PNG and a 1x1 GIF: real image bytes, small enough to keep payloads short.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
_GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
#: Stored bytes that are themselves valid base64 text (a WebP file's opening tags): a mapper
#: that takes such bytes for base64 already sends them unencoded, and the provider decodes
#: other bytes (llama_index issue #17924).
BASE64_LOOKING_BYTES = b"RIFFWEBPVP8L"
#: The binary images a prompt holds besides the PNG (which shrinking goes to).
_OTHER_BINARIES = ((_GIF, "image/gif"), (BASE64_LOOKING_BYTES, "image/webp"))

# Small files of the other kinds, each a valid header of its format.
_PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n")
_WAV = (b"RIFF" + (36).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
        + bytes.fromhex("01000100401f0000803e00000200100064617461") + bytes(4))  # PCM, 8 kHz, no samples
_MP3 = b"ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64" + bytes(28)
_MP4 = bytes.fromhex("00000018667479706d703432000000006d70343269736f6d")  # an ftyp box
#: The kinds of file a prompt may hold with ``file_kinds`` besides images. Documents come
#: twice: most providers take a PDF, few take audio or video bytes, and a case whose bytes
#: the provider cannot take at all is one the reference declines, with fewer checks judged.
_OTHER_KINDS = ("document", "audio", "document", "video")
#: Per kind besides images: (bytes, media type, extension) choices, taken by the file's tag.
_FILES = {
    "document": ((_PDF, "application/pdf", "pdf"),),
    "audio": ((_WAV, "audio/wav", "wav"), (_MP3, "audio/mpeg", "mp3")),
    "video": ((_MP4, "video/mp4", "mp4"),),
}
_URL_TYPES = {"document": "DocumentUrl", "audio": "AudioUrl", "video": "VideoUrl"}  # of pydantic_ai.messages
#: How a history's files besides images are stored: either way file by file, or all as links
#: (an app that uploads them and keeps the URL), or all as bytes. A provider that takes a kind
#: by link only (or not at all) meets whole histories of links: one such file as bytes
#: would have the reference decline the history (``UnsendableContent``).
_FILE_FORMS = ("either", "link", "bytes")


@dataclass(frozen=True)
class _Config:
    min_turns: int
    max_turns: int
    system_prompts: str
    tools: bool
    files: bool
    thinking: bool
    summaries: bool
    retries: bool
    interruptions: bool
    dangling_tail: bool
    ends_with_request: bool
    max_tool_rounds: int
    max_parallel_calls: int
    max_bulk_turns: int
    odd_text: bool
    reused_call_ids: bool
    late_system_requests: bool = False
    blank_prompts: bool = False
    file_kinds: bool = False
    cut_tool_rounds: bool = False


class _Run:
    """Plays one simulated agent history.

    Every choice goes through ``self.choose``: a :class:`DrawChooser` for the drawn
    turns, a :class:`SeededChooser` for the turns of a bulk section.
    """

    def __init__(self, choose: Chooser, cfg: _Config, features: dict[str, bool], bulk: Bulk):
        self.choose = choose
        self.drawn = choose
        self.cfg = cfg
        self.on = features
        self.bulk = bulk
        self.messages: list[ModelMessage] = []
        self.counter = 0
        self.prompted = False  # a user prompt with text was made: later ones may be blank
        self.other_kind: str | None = None  # the history's kind of file besides images (file_kind)
        self.other_form: str | None = None  # how the history stores such files (file_as_link)
        self.seconds = 0
        self.id_style = choose.choice(_ID_STYLES)
        self.model_name = choose.choice(_MODEL_NAMES)
        # Calls of a cancelled response, with whether each finished before the cancel.
        # Their results open the next request, as pydantic-ai's repair writes them when
        # the next run starts (unfinished ones synthesized as interrupted).
        self.carry: list[tuple[ToolCallPart, bool]] = []
        # Ids of recently answered calls: a later round may reuse one.
        self.answered: deque[str] = deque(maxlen=_REUSABLE_IDS)

    # -- small pieces ------------------------------------------------------------------
    def maybe(self, feature: str) -> bool:
        return self.on[feature] and self.choose.boolean()

    def tick(self) -> datetime:
        self.seconds += self.choose.integer(0, 90)
        return HISTORY_EPOCH + timedelta(seconds=self.seconds)

    def tag(self) -> int:
        self.counter += 1
        return self.counter

    def text(self, kind: str) -> str:
        phrase = self.choose.choice(PHRASES[kind])
        tag = f"({TAG_LETTER[kind]}{self.tag()})"
        return self.shape()(phrase=phrase, tag=tag)

    def shape(self):
        """How the next text item is written. In a bulk section only one text in
        _BULK_ODD_TEXT_ODDS is odd, so thousands of messages stay a few hundred KB."""
        if not self.on["odd_text"]:
            return SHAPES[0]
        if self.choose is not self.drawn and self.choose.integer(1, _BULK_ODD_TEXT_ODDS) != 1:
            return SHAPES[0]
        return self.choose.choice(SHAPES)

    def blank(self) -> str:
        """An empty or whitespace-only string: no tag, and a prompt's only content only with
        ``blank_prompts``."""
        return self.choose.choice(BLANKS)

    def with_blank(self, parts: list, make) -> list:
        """``parts`` with, maybe, one blank item (``make(blank)``) at a chosen position."""
        if not parts or not self.maybe("blanks"):
            return parts
        at = self.choose.integer(0, len(parts))
        return [*parts[:at], make(self.blank()), *parts[at:]]

    def file_kind(self) -> str:
        """The kind of the next file besides images: the history's own kind, drawn at its
        first such file, so that a provider that takes that kind meets whole histories of it
        (one file it cannot take declines a whole history, and a bulk section holds
        hundreds); in the drawn turns one in four is drawn afresh, so kinds also meet."""
        if self.other_kind is None:
            self.other_kind = self.choose.choice(_OTHER_KINDS)
        elif self.choose is self.drawn and self.choose.integer(0, 3) == 3:
            return self.choose.choice(_OTHER_KINDS)
        return self.other_kind

    def file_as_link(self, n: int) -> bool:
        """Whether the next file besides images (tag ``n``) is stored as a link: by the history's
        own form (:data:`_FILE_FORMS`), taken from its first such file's tag, then file by file for
        ``either``. Taken from the tag, not drawn, as the binaries of ``_OTHER_BINARIES`` are."""
        if self.other_form is None:
            self.other_form = _FILE_FORMS[n % len(_FILE_FORMS)]
        drawn = self.choose.boolean()  # in every form, so the choices (and the ci cases) stay as they were
        return drawn if self.other_form == "either" else self.other_form == "link"

    def system(self, ts: datetime) -> SystemPromptPart:
        return pai.SystemPromptPart(self.text("system"), timestamp=ts)

    def user_prompt(self, ts: datetime) -> UserPromptPart:
        if self.prompted and self.on["blank_prompts"] and self.choose.integer(0, 2) == 0:
            # A prompt made only of blank text, after one with text (a history with no
            # user text has nothing to send): a plain string, or a list of blank items.
            if self.choose.boolean():
                return pai.UserPromptPart(self.blank(), timestamp=ts)
            return pai.UserPromptPart([self.blank() for _ in range(self.choose.integer(1, 2))], timestamp=ts)
        self.prompted = True
        if not self.maybe("files"):
            return pai.UserPromptPart(self.text("user"), timestamp=ts)
        images: list = []
        for _ in range(self.choose.integer(1, 2)):
            n = self.tag()
            # One file in three of a prompt with other kinds is one (images stay the common case).
            if self.on["file_kinds"] and self.choose.integer(0, 2) == 2:  # shrinks to an image
                kind = self.file_kind()
                data, media_type, extension = _FILES[kind][n % len(_FILES[kind])]
                if self.file_as_link(n):
                    images.append(getattr(pai, _URL_TYPES[kind])(url=f"https://example.com/{kind}/file-{n}.{extension}"))
                else:  # BinaryContent, as pydantic-ai reads such bytes back
                    images.append(pai.BinaryContent(data=data, media_type=media_type))
                continue
            if self.choose.boolean():
                word = self.choose.choice(_IMAGE_WORDS)
                images.append(pai.ImageUrl(url=f"https://example.com/img/{word}-{n}.png"))
            elif self.choose.boolean():
                images.append(pai.BinaryImage(data=_PNG, media_type="image/png"))
            else:
                # Every other one of these holds bytes that are valid base64 text. Taken from
                # the tag, not drawn: the choices (and so the ci profile's cases) stay as they were.
                data, media_type = _OTHER_BINARIES[n % 2]
                images.append(pai.BinaryImage(data=data, media_type=media_type))
        # An image-only prompt is legal; text first is the common (and simpler) case.
        text_position = self.choose.choice(("first", "last", "none"))
        if text_position == "none":
            return pai.UserPromptPart(images, timestamp=ts)
        text = self.text("user")
        items = [text, *images] if text_position == "first" else [*images, text]
        return pai.UserPromptPart(self.with_blank(items, str), timestamp=ts)

    def call(self, taken: set[str]) -> ToolCallPart:
        """One tool call; ``taken`` holds the ids of the calls beside it in the response."""
        name = self.choose.choice(sorted(TOOL_NAMES))
        arg, values = TOOL_NAMES[name]
        args: dict = {arg: self.choose.choice(values)}
        # Streamed calls are stored with the raw JSON string pydantic-ai received.
        as_string = self.choose.boolean()
        n = self.tag()
        tool_call_id = self.reused_id(taken) or self.id_style.format(n=n)
        taken.add(tool_call_id)
        if as_string:
            return pai.ToolCallPart(name, json.dumps(args), tool_call_id)
        return pai.ToolCallPart(name, args, tool_call_id)

    def calls(self) -> list[ToolCallPart]:
        """One response's calls: one, or several run in parallel."""
        taken: set[str] = set()
        return [self.call(taken) for _ in range(self.choose.integer(1, self.cfg.max_parallel_calls))]

    def reused_id(self, taken: set[str]) -> str | None:
        """Maybe the id of a call answered in an earlier round, as servers that restart
        their count each round (``call_1`` again) send it; never one open or beside it."""
        if not self.on["reused_ids"]:
            return None
        free = [i for i in dict.fromkeys(self.answered) if i not in taken]
        if not free or not self.choose.boolean():
            return None
        return self.choose.choice(free)

    def retry_feedback(self, cause: RetryFeedbackCause) -> None:
        """The request asking the model to try again after a failed output validation."""
        ts = self.tick()
        retry = pai.RetryInfo(cause=cause, attempt=1, max_retries=2)
        self.request([pai.RetryFeedbackPart(self.text("feedback"), retry=retry, timestamp=ts)], ts)

    def tool_return(self, call: ToolCallPart, ts: datetime) -> ToolReturnPart:
        self.answered.append(call.tool_call_id)
        outcomes: tuple[_Outcome, ...] = _OUTCOMES + (("retried",) if self.on["retries"] else ())
        outcome: _Outcome = self.choose.choice(outcomes) if self.on["bad_outcomes"] else "success"
        common: dict[str, Any] = dict(tool_name=call.tool_name, tool_call_id=call.tool_call_id, timestamp=ts)
        if outcome == "success":
            text = self.text("result")
            if self.choose.boolean():
                return pai.ToolReturnPart(content=text, **common)
            return pai.ToolReturnPart(content={"result": text, "count": self.choose.integer(0, 3)}, **common)
        if outcome == "retried":
            retry: RetryInfo[ToolRetryCause] = pai.RetryInfo(cause="validation_error", attempt=1, max_retries=3)
            return pai.ToolReturnPart(content=self.text("retried"), outcome="retried", retry=retry, **common)
        kind = "error" if outcome == "failed" else "denied"
        return pai.ToolReturnPart(content=self.text(kind), outcome=outcome, **common)

    def synthesized_return(self, call: ToolCallPart, ts: datetime) -> ToolReturnPart:
        """What pydantic-ai's repair writes for a call that never got a result."""
        self.answered.append(call.tool_call_id)
        return pai.ToolReturnPart(
            tool_name=call.tool_name, content=pai.INTERRUPTED_TOOL_RETURN_CONTENT, tool_call_id=call.tool_call_id,
            metadata={pai.SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True}, timestamp=ts, outcome="interrupted",
        )

    def response(self, parts: list, *, state: ModelResponseState = "complete") -> None:
        calls = any(isinstance(p, pai.ToolCallPart) for p in parts)
        finish: FinishReason | None = None if state == "interrupted" else ("tool_call" if calls else "stop")
        self.messages.append(pai.ModelResponse(parts=parts, timestamp=self.tick(), model_name=self.model_name,
                                               finish_reason=finish, state=state))

    def request(self, parts: list, ts: datetime, *, state: ModelRequestState = "complete") -> None:
        self.messages.append(pai.ModelRequest(parts=parts, timestamp=ts, state=state))

    def mid_system(self, ts: datetime) -> list[SystemPromptPart]:
        """A mid-conversation system prompt (dynamic prompt, re-injection), if drawn."""
        if self.cfg.system_prompts == "anywhere" and self.maybe("mid_system"):
            return [self.system(ts)]
        return []

    def thinking(self) -> ThinkingPart:
        """Thinking text, or (beside other parts only) blank thinking."""
        return pai.ThinkingPart(self.blank() if self.maybe("blanks") else self.text("thinking"))

    def lead_parts(self) -> list:
        """What may precede tool calls (or make up a partial answer): thinking, then text."""
        parts: list[ModelResponsePart] = []
        if self.maybe("thinking"):
            parts.append(pai.ThinkingPart(self.text("thinking")))
        if self.choose.boolean():
            parts.append(pai.TextPart(self.text("assistant")))
        return parts

    # -- the run -------------------------------------------------------------------------
    def user_request(self, n_leading: int = 0) -> None:
        """The request that opens a turn: owed results first, then system and user parts."""
        ts = self.tick()
        if not self.carry and not n_leading and self.maybe("mid_system"):
            # A system prompt stored in a request of its own before the user's.
            self.request([self.system(ts)], ts)
            ts = self.tick()
        owed = [self.tool_return(call, ts) if finished else self.synthesized_return(call, ts)
                for call, finished in self.carry]
        self.carry = []
        parts: list = [*owed, *(self.system(ts) for _ in range(n_leading)), *self.mid_system(ts)]
        parts.append(self.user_prompt(ts))
        if not n_leading:
            parts.extend(self.mid_system(ts))  # after the prompt: legal, and it happens
        self.request(parts, ts)
        if self.cfg.late_system_requests and not n_leading and self.maybe("mid_system"):
            # A reminder an app stores as a request of its own after the user's.
            ts = self.tick()
            self.request([self.system(ts)], ts)

    def maybe_tool_round(self, done: int) -> bool:
        """Another tool round, if one is chosen: the choice and the round are one span."""
        if not self.another(done, 0, self.cfg.max_tool_rounds):
            return False
        self.kept(self.tool_round)
        return True

    def tool_round(self) -> None:
        if self.choose.boolean() and self.choose.boolean():
            # The conversation goes on with another model (pydantic-ai takes a model per
            # run), whose call ids are written its own way: the earlier rounds keep theirs.
            self.id_style = self.choose.choice(_ID_STYLES)
            self.model_name = self.choose.choice(_MODEL_NAMES)
        calls = self.calls()
        self.response(self.with_blank([*self.lead_parts(), *calls], pai.TextPart))
        ts = self.tick()
        returns = [self.tool_return(call, ts) for call in calls]
        if len(returns) > 1:
            returns = self.choose.permutation(returns)  # parallel tools finish in any order
        parts: list = list(returns)
        if self.maybe("steer"):
            # The user typed while the tools ran; some UIs store it ahead of the results.
            steer = pai.UserPromptPart(self.text("steer"), timestamp=ts)
            parts = [steer, *parts] if self.choose.boolean() else [*parts, steer]
        parts.extend(self.mid_system(ts))
        self.request(parts, ts)

    def answer(self, *, may_interrupt_calls: bool) -> None:
        """The response that ends a turn, possibly with output-validation retries."""
        if self.maybe("interruptions"):
            kind = self.choose.choice(("text", "calls") if may_interrupt_calls and self.on["tools"]
                                             else ("text",))
            if kind == "calls":
                calls = self.calls()
                self.response([*self.lead_parts(), *calls], state="interrupted")
                done = self.choose.integer(0, len(calls) - 1)  # results that finished before the cancel
                self.carry = [(call, i < done) for i, call in enumerate(calls)]
                return
            parts = self.lead_parts()
            if not parts:  # cancelled before any text streamed: only thinking, or a partial text
                parts = [pai.ThinkingPart(self.text("thinking"))] if self.on["thinking"] else [
                    pai.TextPart(self.text("assistant"))]
            self.response(parts, state="interrupted")
            return
        if self.maybe("retries"):
            if self.choose.boolean():
                self.response([pai.TextPart(self.text("assistant"))])
                self.retry_feedback("validation_error")
            else:
                self.response([])  # the model returned nothing at all
                self.retry_feedback("no_output")
        parts = [self.thinking()] if self.maybe("thinking") else []
        parts += [pai.TextPart(self.text("assistant")) for _ in range(self.choose.integer(1, 2))]
        self.response(self.with_blank(parts, pai.TextPart))

    def another(self, done: int, least: int, most: int) -> bool:
        """Whether one more of something comes after ``done`` of them (between ``least``
        and ``most``); four times in five, so runs are long enough."""
        return done < least or (done < most and self.choose.integer(0, 4) > 0)

    def kept(self, play) -> None:
        """Play ``play`` (a turn, a tool round) unless a choice skips it.

        Shrinking lowers the choice to 0 and deletes the now-unused span of ``play``'s
        choices, so a bug in the fifth turn shrinks to a history of that turn alone (a
        drawn count of turns, or one "another" per turn, can only cut from the end)."""
        if self.choose.integer(0, 7):
            self.choose.span(play)

    def body(self, *, last: bool) -> None:
        """Everything after the turn's opening request."""
        rounds = 0
        while self.on["tools"] and self.choose.span(lambda: self.maybe_tool_round(rounds)):  # noqa: B023 - run at once
            rounds += 1
        if not last:
            self.answer(may_interrupt_calls=True)
            return
        if self.cfg.dangling_tail:
            calls = self.calls()
            state: ModelResponseState = self.choose.choice(("complete", "interrupted"))
            self.response([*self.lead_parts(), *calls], state=state)
            if self.cfg.ends_with_request:
                # Tools crashed mid-round: the results that finished, maybe none.
                ts = self.tick()
                done = self.choose.integer(0, len(calls) - 1)
                self.request([self.tool_return(c, ts) for c in calls[:done]], ts, state="interrupted")
            return
        if self.cfg.ends_with_request:
            # Cut just before a model call; the last request is the user's prompt, a tool
            # round's results (already drawn) or output-retry feedback.
            if self.maybe("retries"):
                self.response([pai.TextPart(self.text("assistant"))])
                self.retry_feedback("validation_error")
            return
        self.answer(may_interrupt_calls=False)

    def play(self) -> list[ModelMessage]:
        cfg = self.cfg
        n_leading = self.choose.integer(0, 2) if cfg.system_prompts != "none" else 0
        self.summary = self.maybe("summaries")
        self.keep_task = self.summary and self.choose.boolean()
        # The harness (and many apps) store the standing prompt in a request of its own.
        if n_leading and ((self.summary and not self.keep_task) or self.choose.boolean()):
            ts = self.tick()
            self.request([self.system(ts) for _ in range(n_leading)], ts)
            n_leading = 0
        self.n_leading = n_leading
        self.played = 0
        drawn, more = 0, True
        while more:  # each drawn turn is one span, so shrinking can delete it whole
            drawn += 1
            more = self.drawn.span(lambda: self.drawn_turn(drawn))  # noqa: B023 - run at once
        return self.messages

    def drawn_turn(self, drawn: int) -> bool:
        """The ``drawn``-th drawn turn, and whether another follows (asked first). A bulk
        section is played right after the first one, by the seeded chooser: the opening
        (standing prompt, summary) and the newest turns stay drawn."""
        self.choose = self.drawn
        # Turns count as played (a skipped one does not), and only the first max_turns
        # drawn may be skipped, so a run ends whatever the skips.
        more = self.another(self.played + 1, self.cfg.min_turns, self.cfg.max_turns)
        last = not more and not (drawn == 1 and self.bulk.size)
        turn = 0 if drawn == 1 else self.bulk.size + drawn - 1
        if last or drawn > self.cfg.max_turns:  # the last is never skipped: never an empty history
            self.play_turn(turn, last=last)
        else:
            self.kept(lambda: self.play_turn(turn, last=False))
        if drawn > 1:
            return more
        bulk_choose = self.bulk.chooser()
        for index in range(1, 1 + self.bulk.size):
            self.choose = self.bulk.unit_chooser(index - 1) if self.bulk.per_unit else bulk_choose
            self.play_turn(index, last=not more and index == self.bulk.size)
        self.choose = self.drawn
        return more

    def play_turn(self, turn: int, *, last: bool) -> None:
        self.played += turn == 0 or turn > self.bulk.size  # a drawn turn
        if turn == 0 and self.summary:
            # Harness 0.62 after a compaction: [standing prompt], [first user prompt],
            # [summary], then the kept tail, which may start in the middle of a turn.
            if self.keep_task:
                self.user_request(self.n_leading)
            ts = self.tick()
            part = pai.CompactionPart(content=self.text("summary"), metadata={SUMMARY_METADATA_KEY: True})
            self.request([part], ts)
            must_continue = last and (self.cfg.dangling_tail or not self.cfg.ends_with_request)
            if must_continue or self.choose.boolean():
                self.body(last=last)
            return
        self.user_request(self.n_leading if turn == 0 else 0)
        self.body(last=last)


_FEATURES = ("files", "thinking", "summaries", "retries", "interruptions", "mid_system", "steer", "tools",
             "bad_outcomes", "odd_text", "blanks", "reused_ids", "blank_prompts", "file_kinds")


#: Features on whenever allowed, never switched off by the swarm: files of other kinds are
#: already one file in three of a prompt with files, a prompt in two.
_ALWAYS = frozenset({"file_kinds"})


@st.composite
def _histories(draw, cfg: _Config) -> list[ModelMessage]:
    # Drawn first, so shrinking drops the bulk section before anything else.
    bulk = bulk_window(draw, cfg.max_bulk_turns)
    allowed = {
        "files": cfg.files, "thinking": cfg.thinking, "summaries": cfg.summaries, "retries": cfg.retries,
        "interruptions": cfg.interruptions, "mid_system": cfg.system_prompts == "anywhere",
        "steer": True, "tools": cfg.tools, "bad_outcomes": True, "odd_text": cfg.odd_text, "blanks": cfg.odd_text,
        "reused_ids": cfg.tools and cfg.reused_call_ids, "blank_prompts": cfg.blank_prompts,
        "file_kinds": cfg.files and cfg.file_kinds,
    }
    # Swarm testing: each example switches some features off, so the others meet often,
    # and switching off is the first thing shrinking does. A dangling tail needs tools.
    features = {name: allowed[name] and (name in _ALWAYS or draw(st.booleans())
                                         or (name == "tools" and cfg.dangling_tail))
                for name in _FEATURES}
    run = _Run(DrawChooser(draw), cfg, features, bulk)
    history = run.play()
    if cfg.cut_tool_rounds and run.counter % _CUT_ONE_IN == 0:
        return _cut_while_tools_ran(history, run.counter // _CUT_ONE_IN)
    return history


#: With ``cut_tool_rounds``, one history in this many (by its count of tags) is cut off.
_CUT_ONE_IN = 4


def _cut_while_tools_ran(history: list[ModelMessage], done: int) -> list[ModelMessage]:
    """``history`` as stored when its run was cut off while the tools of its last round ran:
    everything after that round's response left out but the first ``done`` results that
    finished (fewer than the calls: one is always left without), in a request marked
    interrupted; a history without a tool round as it is."""
    rounds = [i for i, message in enumerate(history[:-1]) if isinstance(message, pai.ModelResponse)
              and message.tool_calls and isinstance(history[i + 1], pai.ModelRequest)]
    if not rounds:
        return history
    at = rounds[-1]
    response = history[at]
    assert isinstance(response, pai.ModelResponse), "a tool round is a response"
    calls = {call.tool_call_id for call in response.tool_calls}
    results = [part for part in history[at + 1].parts
               if isinstance(part, pai.ToolReturnPart) and part.tool_call_id in calls]
    finished = results[:done % len(results)] if results else []
    if not finished:
        return history[:at + 1]
    return [*history[:at + 1], pai.ModelRequest(parts=finished, timestamp=history[at + 1].timestamp,
                                                state="interrupted")]




def histories(
    *,
    min_turns: int = 1,
    max_turns: int = 8,
    system_prompts: str = "anywhere",
    tools: bool = True,
    files: bool = True,
    thinking: bool = True,
    summaries: bool = True,
    retries: bool = True,
    interruptions: bool = True,
    dangling_tail: bool = False,
    ends_with_request: bool = True,
    max_tool_rounds: int = 3,
    max_parallel_calls: int = 3,
    max_bulk_turns: int = 700,
    odd_text: bool = True,
    reused_call_ids: bool = True,
    late_system_requests: bool = False,
    blank_prompts: bool = False,
    file_kinds: bool = False,
    cut_tool_rounds: bool = False,
):
    """A strategy for ``list[ModelMessage]`` histories shaped like real agent runs.

    - ``min_turns``/``max_turns``: user turns (a turn = the user's request, the tool
      rounds it caused, the answer). With a compaction summary, the first turn's
      prompt may have been summarized away.
    - ``system_prompts``: ``"leading"`` (only at the very start: in the first request or
      a request of their own), ``"anywhere"`` (also mid-conversation, before or after a
      user prompt, after tool results, or alone in a request), ``"none"``.
    - ``tools``: tool rounds (one or several calls with unique ids, each answered).
    - ``files``: images in user prompts (``BinaryImage`` and ``ImageUrl``); the same bytes
      may come twice in a history, and some stored bytes are themselves valid base64 text
      (:data:`BASE64_LOOKING_BYTES`), which a mapper must still encode.
    - ``thinking``: ``ThinkingPart`` in responses (a cancelled one may hold only that).
    - ``summaries``: a request-side ``CompactionPart`` in a request of its own, placed as
      pydantic-ai-harness 0.62 stores it.
    - ``retries``: tool results with ``outcome="retried"`` and output-validation
      ``RetryFeedbackPart`` requests (including after an empty response).
    - ``interruptions``: cancelled runs, stored with ``state="interrupted"``, then
      continued (owed tool results synthesized as pydantic-ai's repair does).
    - ``dangling_tail``: if True the history always ends with unanswered tool calls: a
      final response whose calls have no results, followed, when ``ends_with_request``,
      by the ``state="interrupted"`` request of the results that finished (maybe none).
    - ``ends_with_request``: the last message is a ``ModelRequest`` (the input of the
      next model call); otherwise a ``ModelResponse``.
    - ``max_tool_rounds``/``max_parallel_calls``: bounds per turn and per response.
    - ``max_bulk_turns``: about one example in eight also holds a bulk section of up to
      this many turns (on top of ``max_turns``) right after the first turn, played by a
      PRNG from one drawn seed with the example's features, so histories of thousands
      of messages cost a few draws; 0 turns bulk sections off.
    - ``odd_text``: text items may come padded with whitespace and newlines, with
      non-ASCII, combining characters and emoji, several thousand characters long, or
      looking like JSON, a role marker or a frame tag; and blank items (``""``,
      whitespace) may sit beside other content: a blank ``TextPart`` in a response, a
      blank item in a list-typed prompt, blank thinking. Blank items carry no tag.

    - ``reused_call_ids``: a tool call may reuse the id of a call answered in an earlier
      round (llama.cpp sends one constant id, Kimi restarts ``<name>:0`` every round);
      ids are always unique within one response and never reused while open.
    - ``late_system_requests``: with ``system_prompts="anywhere"``, a system prompt may also
      come in a request of its own right after the user's, before the response (a reminder
      an app stores as its own message; compaction cases turn it on).
    - ``blank_prompts``: a user prompt after the first may be only blank text, ``""`` or
      whitespace, as a string or a list of blank items (an app that sends an empty input box; the payload
      contract turns it on: Anthropic rejects a user message with no non-blank text).
    - ``file_kinds``: with ``files``, a prompt's files may also be PDF documents, WAV or MP3
      audio and MP4 video, each as bytes (``BinaryContent``) or by URL (``DocumentUrl``,
      ``AudioUrl``, ``VideoUrl``): every kind a provider may take, or cannot take at all (the
      payload contract turns it on). A history keeps mostly to one kind (``_Run.file_kind``),
      and stores such files either way, or all as links, or all as bytes (``_Run.file_as_link``).
    - ``cut_tool_rounds``: about one history in four with a tool round (those whose count of
      tags is a multiple of four: not drawn, so the draws stay as they were) is cut off while the tools of its last
      round ran: everything after that round's response is left out but some of the results
      that finished, never all, in a request marked ``state="interrupted"`` (the payload
      contract turns it on: a mapper meets calls with no result, as an application that maps
      the stored thread after a crash or a cancel gives them).

    Without a dangling tail or a cut, every tool call is answered exactly once, by the
    request right after its response.
    """
    check_int("min_turns", min_turns, 1)
    check_int("max_turns", max_turns, 1)
    if max_turns < min_turns:
        raise InvalidArgument(f"need min_turns <= max_turns, got {min_turns=} {max_turns=}")
    if system_prompts not in _SYSTEM_PROMPT_MODES:
        raise InvalidArgument(f"system_prompts={system_prompts!r} must be one of {_SYSTEM_PROMPT_MODES}")
    for name, value in (("tools", tools), ("files", files), ("thinking", thinking), ("summaries", summaries),
                        ("retries", retries), ("interruptions", interruptions),
                        ("dangling_tail", dangling_tail), ("ends_with_request", ends_with_request)):
        check_bool(name, value)
    check_int("max_tool_rounds", max_tool_rounds, 0)
    check_int("max_parallel_calls", max_parallel_calls, 1)
    check_int("max_bulk_turns", max_bulk_turns, 0)
    check_bool("odd_text", odd_text)
    check_bool("reused_call_ids", reused_call_ids)
    check_bool("late_system_requests", late_system_requests)
    check_bool("blank_prompts", blank_prompts)
    check_bool("file_kinds", file_kinds)
    check_bool("cut_tool_rounds", cut_tool_rounds)
    if dangling_tail and not tools:
        raise InvalidArgument("dangling_tail=True needs tools=True: a dangling tail is unanswered tool calls")
    cfg = _Config(min_turns, max_turns, system_prompts, tools, files, thinking, summaries, retries,
                  interruptions, dangling_tail, ends_with_request, max_tool_rounds, max_parallel_calls,
                  max_bulk_turns, odd_text, reused_call_ids, late_system_requests, blank_prompts, file_kinds,
                  cut_tool_rounds)
    return _histories(cfg)


def instructions(*, blank: bool = True, absent: bool = True):
    """A strategy for the run's ``instructions``: (with ``absent``) None, a short
    unique-looking string, or (with ``blank``) an empty or whitespace-only one, which an app
    passes when its instructions field was left empty and which must not become a system
    message."""
    check_bool("blank", blank)
    check_bool("absent", absent)
    text = st.sampled_from(PHRASES["instructions"]).map(lambda phrase: f"{phrase} (instructions)")
    return st.one_of(*([st.none()] if absent else []), text, *([st.sampled_from(BLANKS)] if blank else []))
