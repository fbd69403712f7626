// Continues conversations kept by a server (the gateway's Responses state) with the Vercel AI
// SDK's OpenAI Responses model (`createOpenAI(...).responses("m")` from `@ai-sdk/openai`), as
// a Node client of the gateway would: each turn after the first sends only its new prompt,
// and names what came before with `providerOptions.openai.previousResponseId` (or
// `providerOptions.openai.conversation`).
//
//   node ai_sdk_previous_response.mjs <baseURL> [scenario ...]
//
// `baseURL` is the gateway's `/v1` (the provider posts to `<baseURL>/responses`); the API
// key is "sk-ai-sdk-judge". Scenarios (all of them when none is named):
//
//   generate      generateText "hello there", then "and now?" with previousResponseId;
//   stream        the same with streamText (the stream read whole);
//   tools         generateText "use the tool for paris" with a function tool `lookup`
//                 (it returns "42 for <q>") and stopWhen: stepCountIs(4), so that the SDK
//                 runs the tool and asks again (its second step resends the first step's
//                 items, as `item_reference`s since store is true by default); then
//                 "and now?" with previousResponseId of the last step's response;
//   tool-result   generateText "use the tool for paris" with `lookup` declared without
//                 `execute` (the SDK stops at the call); then only the tool's result
//                 ("42 for <q>", as a `tool` message) with previousResponseId; then
//                 "and now?" with previousResponseId of that: three turns, the client
//                 resending nothing;
//   conversation  POST <baseURL>/conversations, then generateText "hello there" and
//                 "and now?", each with providerOptions.openai.conversation.
//
// One JSON object per turn on stdout: scenario, turn (0, 1, …), conversation (its id, or
// null), text, responseId (providerMetadata.openai.responseId of the result), finishReason,
// steps ([{responseId (response.id), providerResponseId (providerMetadata.openai.responseId),
// finishReason, text, toolCalls [{toolCallId, toolName, input}], toolResults [{toolCallId,
// toolName, output}], request (the body the provider sent, parsed)}]), warnings, and
// errors ([{name, message, statusCode, responseBody}]: a failed turn ends its scenario).
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";

const API_KEY = "sk-ai-sdk-judge";
const FIRST = "hello there";
const NEXT = "and now?";
const TOOL_PROMPT = "use the tool for paris";

function plain(error) {
  if (!(error instanceof Error)) return { name: "unknown", message: String(error) };
  return {
    name: error.name,
    message: error.message,
    statusCode: error.statusCode ?? null,
    responseBody: error.responseBody ?? null,
  };
}

function parsed(body) {
  if (typeof body !== "string") return body ?? null;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

function stepOf(step) {
  return {
    responseId: step.response?.id ?? null,
    providerResponseId: step.providerMetadata?.openai?.responseId ?? null,
    finishReason: step.finishReason,
    text: step.text,
    toolCalls: step.toolCalls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, input: c.input })),
    toolResults: step.toolResults.map((r) => ({ toolCallId: r.toolCallId, toolName: r.toolName, output: r.output })),
    request: parsed(step.request?.body),
  };
}

const lookup = tool({
  description: "Look something up.",
  inputSchema: jsonSchema({
    type: "object",
    properties: { q: { type: "string" } },
    required: ["q"],
    additionalProperties: false,
  }),
  execute: async ({ q }) => `42 for ${q}`,
});

// The same tool for a client that runs it itself, between two requests.
const declaredLookup = tool({ description: lookup.description, inputSchema: lookup.inputSchema });

function resultOf(reading) {
  const [call] = reading.steps.at(-1).toolCalls;
  if (call === undefined) throw new Error("the previous turn called no tool");
  return {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "text", value: `42 for ${call.input.q}` },
      },
    ],
  };
}

async function generated(options) {
  const result = await generateText({ maxRetries: 0, ...options });
  return {
    text: result.text,
    responseId: result.providerMetadata?.openai?.responseId ?? null,
    finishReason: result.finishReason,
    steps: result.steps.map(stepOf),
    warnings: result.warnings ?? [],
    errors: [],
  };
}

async function streamed(options) {
  const errors = [];
  const result = streamText({ maxRetries: 0, ...options, onError: () => {} });
  for await (const part of result.fullStream) {
    if (part.type === "error") errors.push(plain(part.error));
  }
  if (errors.length > 0) return { text: "", responseId: null, finishReason: null, steps: [], warnings: [], errors };
  const steps = await result.steps;
  return {
    text: await result.text,
    responseId: (await result.providerMetadata)?.openai?.responseId ?? null,
    finishReason: await result.finishReason,
    steps: steps.map(stepOf),
    warnings: (await result.warnings) ?? [],
    errors,
  };
}

async function createConversation(baseURL) {
  const answer = await fetch(`${baseURL}/conversations`, {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
    body: "{}",
  });
  const body = await answer.text();
  if (!answer.ok) throw new Error(`POST /conversations: ${answer.status} ${body}`);
  return JSON.parse(body).id;
}

// Each scenario: its turns, as functions of the model, the previous turn's reading and the
// conversation id.
const SCENARIOS = {
  generate: [
    (model) => generated({ model, prompt: FIRST }),
    (model, last) => generated({ model, prompt: NEXT, providerOptions: { openai: { previousResponseId: last.responseId } } }),
  ],
  stream: [
    (model) => streamed({ model, prompt: FIRST }),
    (model, last) => streamed({ model, prompt: NEXT, providerOptions: { openai: { previousResponseId: last.responseId } } }),
  ],
  tools: [
    (model) => generated({ model, prompt: TOOL_PROMPT, tools: { lookup }, stopWhen: stepCountIs(4) }),
    (model, last) =>
      generated({
        model,
        prompt: NEXT,
        tools: { lookup },
        stopWhen: stepCountIs(4),
        providerOptions: { openai: { previousResponseId: last.responseId } },
      }),
  ],
  "tool-result": [
    (model) => generated({ model, prompt: TOOL_PROMPT, tools: { lookup: declaredLookup } }),
    (model, last) =>
      generated({
        model,
        messages: [resultOf(last)],
        tools: { lookup: declaredLookup },
        providerOptions: { openai: { previousResponseId: last.responseId } },
      }),
    (model, last) =>
      generated({
        model,
        prompt: NEXT,
        tools: { lookup: declaredLookup },
        providerOptions: { openai: { previousResponseId: last.responseId } },
      }),
  ],
  conversation: [
    (model, _last, conversation) => generated({ model, prompt: FIRST, providerOptions: { openai: { conversation } } }),
    (model, _last, conversation) => generated({ model, prompt: NEXT, providerOptions: { openai: { conversation } } }),
  ],
};

const [baseURL, ...asked] = process.argv.slice(2);
if (!baseURL) {
  console.error("usage: node ai_sdk_previous_response.mjs <baseURL> [scenario ...]");
  process.exit(2);
}
const provider = createOpenAI({ baseURL, apiKey: API_KEY });
const model = provider.responses("m");
for (const scenario of asked.length > 0 ? asked : Object.keys(SCENARIOS)) {
  const turns = SCENARIOS[scenario];
  if (turns === undefined) {
    console.error(`no scenario ${scenario}`);
    process.exit(2);
  }
  let conversation = null;
  let last = null;
  for (const [index, turn] of turns.entries()) {
    let reading;
    try {
      if (scenario === "conversation" && conversation === null) conversation = await createConversation(baseURL);
      reading = await turn(model, last, conversation);
    } catch (error) {
      reading = { text: "", responseId: null, finishReason: null, steps: [], warnings: [], errors: [plain(error)] };
    }
    console.log(JSON.stringify({ scenario, turn: index, conversation, ...reading }));
    if (reading.errors.length > 0) break;
    last = reading;
  }
}
