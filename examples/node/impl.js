#!/usr/bin/env node
// A chat-history implementation in Node.js (no npm packages), checked by chatconform over stdio.
//
//     chatconform run --impl exec:'node examples/node/impl.js'
//
// chatconform starts it, sends a hello and then one JSON request per line on stdin; it
// answers each with one JSON line on stdout (docs/protocol.md). It implements two contracts:
//
// - thread: the newest row's thread from stored rows read newest first;
// - payload: a pydantic-ai history (its JSON) as a request body for Qwen3.5+ served by vLLM
//   (OpenAI-style messages). This mapper has a real, shipped bug, kept on purpose and
//   declared as an expected failure: the sort-only fix of https://github.com/langgenius/dify/pull/39372.
//   It moves the system messages to the front but keeps one per system prompt, plus one
//   for the run's instructions, and Qwen3.5+'s chat template rejects every system message
//   after the first ("System message must be at the beginning.",
//   https://github.com/vllm-project/vllm/issues/41114). The fix is one system message that
//   joins them all (see the Python example).

"use strict";

const readline = require("node:readline");

const NAME = "example-node";
const VERSION = "1.0.0";
const PROVIDER = "qwen-vllm";
const UUID_NIL = "00000000-0000-0000-0000-000000000000";
const INTERRUPTED = "The tool call was interrupted before a result was produced.";
const DIFY_39372 = "https://github.com/langgenius/dify/pull/39372: system messages sorted first but "
  + "sent one per prompt; Qwen3.5+ rejects a second system message";

// -- thread ------------------------------------------------------------------------------

// The thread of the newest row, newest first. A parent is found by id, never by position
// (rows with equal timestamps come in any order), except a UUID_NIL parent, which is the
// next older row. The walk ends at a head, at a parent outside the rows, or where it would
// come back to a row it already holds (corrupted links). Of rows sharing an id, the newest
// stands.
function extractThread(input) {
  const rows = [];
  const place = new Map();
  for (const row of input) {
    if (!place.has(row.id)) {
      place.set(row.id, rows.length);
      rows.push(row);
    }
  }
  if (rows.length === 0) return [];
  const walked = [0];
  const taken = new Set(walked);
  for (let index = 0; ;) {
    const parent = rows[index].parent_message_id;
    if (!parent) break;
    index = parent === UUID_NIL ? index + 1 : (place.has(parent) ? place.get(parent) : rows.length);
    if (index >= rows.length || taken.has(index)) break;
    walked.push(index);
    taken.add(index);
  }
  return walked.map((i) => rows[i]);
}

// -- payload -----------------------------------------------------------------------------

// Python's idea of blank: the same characters str.strip() removes.
const BLANK = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;
const sent = (text) => !BLANK.test(text);

// A tool result's JSON as Python's json.dumps writes it (", " and ": "), the text the
// reference sends, so a result reads the same whichever mapper sent it.
function resultJson(value) {
  if (Array.isArray(value)) return `[${value.map(resultJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${resultJson(v)}`).join(", ")}}`;
  }
  return JSON.stringify(value);
}

function argumentsOf(args) {
  if (args === undefined || args === null) return "{}";
  return typeof args === "string" ? args : JSON.stringify(args);
}

function* userPieces(content) {
  for (const piece of typeof content === "string" ? [content] : content) {
    if (typeof piece === "string") yield ["text", piece];
    else if (piece.kind === "text-content") yield ["text", piece.content];
    else if (piece.kind === "image-url") yield ["image", piece.url];
    else if (piece.kind === "video-url") yield ["video", piece.url];
    else if (piece.kind === "document-url" || piece.kind === "audio-url") yield ["link", piece.url]; // as text
    else if (piece.kind === "binary") {
      // pydantic writes bytes in the URL-safe base64 alphabet; a data URL takes the standard one
      const data = piece.data.replace(/-/g, "+").replace(/_/g, "/");
      const mediaType = piece.media_type || "";
      if (mediaType.startsWith("image/")) yield ["image", `data:${mediaType};base64,${data}`];
      else if (mediaType.startsWith("video/")) yield ["video", `data:${mediaType};base64,${data}`];
      // The template takes no documents or audio: sending them fails, dropping them loses them.
      else throw new TypeError(`${PROVIDER} takes no ${mediaType || "untyped"} bytes`);
    } else if (piece.kind !== "cache-point") {
      throw new TypeError(`cannot send user content of kind ${JSON.stringify(piece.kind)}`);
    }
  }
}

// One piece of a user prompt as a content part: text (a link too), an image or a video.
function userPart([kind, value]) {
  if (kind === "text" || kind === "link") return { type: "text", text: value };
  if (kind === "video") return { type: "video_url", video_url: { url: value } };
  return { type: "image_url", image_url: { url: value } };
}

// [role, pieces] of one request part; role null: not sent here.
function requestPieces(part) {
  switch (part.part_kind) {
    case "system-prompt": return ["system", [["text", part.content]]];
    case "user-prompt": return ["user", [...userPieces(part.content)]];
    case "compaction": return ["user", part.content ? [["text", part.content]] : []];
    case "retry-feedback":
      return ["user", [["text", typeof part.content === "string" ? part.content : JSON.stringify(part.content)]]];
    default: return [null, []];
  }
}

// The id a call goes out under: its own, or <id>_<n> when an earlier call had it.
function uniqueId(callId, used, storedIds) {
  if (!used.has(callId)) return callId;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = callId.slice(0, 64 - suffix.length) + suffix;
    if (!used.has(candidate) && !storedIds.has(candidate)) return candidate;
  }
}

// One system message first; the rest in history order; each call's results right after
// the assistant message that made it (the earliest stored result with its id, or an
// interrupted one); failed results marked as errors; a reused call id sent as a new one.
function qwenBody(history, instructions) {
  const stored = new Map();
  const storedIds = new Set();
  for (const message of history) {
    for (const part of message.parts) {
      if (part.part_kind === "tool-return" && message.kind === "request") {
        if (!stored.has(part.tool_call_id)) stored.set(part.tool_call_id, []);
        stored.get(part.tool_call_id).push(part);
      } else if (part.part_kind === "tool-call" && message.kind === "response") {
        storedIds.add(part.tool_call_id);
      }
    }
  }
  const turns = []; // [role, pieces]
  const used = new Set();
  for (const message of history) {
    if (message.kind === "request") {
      let role = null;
      for (const part of message.parts) {
        const [voice, pieces] = requestPieces(part);
        if (voice === null) continue;
        if (voice !== role) {
          turns.push([voice, []]);
          role = voice;
        }
        turns[turns.length - 1][1].push(...pieces.filter((p) => p[0] !== "text" || sent(p[1])));
      }
      continue;
    }
    const said = [];
    const answers = [];
    for (const part of message.parts) {
      if (part.part_kind === "text" && sent(part.content)) {
        said.push(["text", part.content]);
      } else if (part.part_kind === "tool-call") {
        const wire = uniqueId(part.tool_call_id, used, storedIds);
        used.add(wire);
        said.push(["call", wire, part.tool_name, argumentsOf(part.args)]);
        const queue = stored.get(part.tool_call_id);
        const result = queue && queue.length ? queue.shift() : null;
        if (result === null) {
          answers.push(["result", wire, INTERRUPTED]);
        } else {
          let content = result.content;
          if (result.outcome === "failed" || result.outcome === "retried") content = { error: content };
          answers.push(["result", wire, typeof content === "string" ? content : resultJson(content)]);
        }
      }
    }
    turns.push(["assistant", said]);
    if (answers.length) turns.push(["tool", answers]);
  }

  // The bug (dify PR #39372): one system message per prompt, sorted first, never joined.
  const system = turns.filter(([role]) => role === "system").flatMap(([, pieces]) => pieces.map((p) => p[1]));
  if (instructions && sent(instructions)) system.push(instructions);
  const messages = system.map((text) => ({ role: "system", content: text }));
  for (const [role, pieces] of turns) {
    if (role === "system" || pieces.length === 0) continue;
    const texts = pieces.filter((p) => p[0] === "text").map((p) => p[1]);
    if (role === "user") {
      messages.push({
        role: "user",
        content: texts.length === pieces.length ? texts.join("\n\n") : pieces.map(userPart),
      });
    } else if (role === "assistant") {
      const reply = { role: "assistant" };
      if (texts.length) reply.content = texts.join("\n\n");
      const calls = pieces.filter((p) => p[0] === "call");
      if (calls.length) {
        reply.tool_calls = calls.map(([, id, name, args]) => ({ id, type: "function", function: { name, arguments: args } }));
      }
      messages.push(reply);
    } else {
      for (const [, id, text] of pieces) messages.push({ role: "tool", tool_call_id: id, content: text });
    }
  }
  return { messages };
}

// -- the protocol --------------------------------------------------------------------------

const HELLO = {
  protocol: 1, name: NAME, version: VERSION, language: "javascript",
  contracts: ["thread", "payload"], providers: [PROVIDER],
  expected_failures: {
    "payload.system_first": DIFY_39372,
    "payload.schema_valid": DIFY_39372,
    "payload.matches_reference": DIFY_39372,
    "lifecycle.payload_accepted": DIFY_39372,
  },
};

function answer(request) {
  const data = request.input;
  if (request.contract === "thread") return extractThread(data);
  if (request.contract === "payload") {
    if (request.provider !== PROVIDER) throw new Error(`no mapping for provider ${request.provider}`);
    return qwenBody(data.history, data.instructions);
  }
  throw new Error(`no contract ${request.contract}`);
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  const request = JSON.parse(line);
  let reply;
  if (request.type === "stop") {
    lines.close();
    return;
  }
  if (request.type === "hello") {
    reply = HELLO;
  } else {
    try {
      reply = { id: request.id, result: answer(request) };
    } catch (error) {
      reply = { id: request.id, error: { type: error.name, message: error.message, traceback: error.stack } };
    }
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
