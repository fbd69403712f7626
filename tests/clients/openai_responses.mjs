// Reads OpenAI Responses streams with the Vercel AI SDK's OpenAI provider, its Responses
// model (`createOpenAI(...).responses("m")` from `@ai-sdk/openai`) through `streamText`, as a
// Node client of a gateway would: for each base URL on the command line (the provider posts
// to `<baseURL>/responses`), what it read, printed as one JSON object per line:
//
//   baseURL, reasoning (the reasoning text, joined: the provider reads only
//   `response.reasoning_summary_text.delta`, never `response.reasoning_text.delta`),
//   reasoningBlocks ([{id, itemId, text, encryptedContent}]: one per reasoning-start, `id`
//   is `<item id>:<summary index>`, `itemId` and `encryptedContent` from the parts'
//   providerMetadata.openai, the last non-null one read), text, textBlocks ([{id, text}], one
//   per message item), toolCalls ([{toolCallId, toolName, input, providerExecuted, invalid,
//   itemId}]: `input` is the parsed JSON value, or the text when it is not JSON), toolResults
//   (those a server ran), sources, finishReason (the SDK's: "stop", "tool-calls", "length",
//   "content-filter", "unknown", "error"), usage (of the last step: inputTokens,
//   outputTokens, totalTokens, reasoningTokens, cachedInputTokens), totalUsage,
//   providerMetadata (of the last step: openai.responseId, serviceTier, usage for the counts
//   it has no name for), responseMetadata ({id, modelId} of response-metadata parts),
//   errors, toolErrors, warnings, parts (the types of the stream parts, in order).
//
// The hosted tools the provider knows are declared (web_search, code_interpreter,
// image_generation, local_shell), so that streamText accepts the server's calls of them;
// no function tool is: streamText marks every function call `invalid` (and adds a
// `tool-error`, NoSuchToolError), with its name and input as read.
// With AI_SDK_HOSTED_TOOLS=0 none is declared: the request has no `tools` (as a gateway
// that serves functions only wants it).
import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";

function plain(error) {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return error === undefined ? null : error;
}

function openaiMeta(part) {
  return part.providerMetadata?.openai ?? {};
}

function reasoningMeta(block, part) {
  const meta = openaiMeta(part);
  if (meta.itemId != null) block.itemId = meta.itemId;
  if (meta.reasoningEncryptedContent != null) block.encryptedContent = meta.reasoningEncryptedContent;
}

const hostedTools = process.env.AI_SDK_HOSTED_TOOLS !== "0";

for (const baseURL of process.argv.slice(2)) {
  const provider = createOpenAI({ baseURL, apiKey: "x" });
  const result = streamText({
    model: provider.responses("m"),
    prompt: "hi",
    tools: hostedTools ? {
      web_search: provider.tools.webSearch({}),
      code_interpreter: provider.tools.codeInterpreter({}),
      image_generation: provider.tools.imageGeneration({}),
      local_shell: provider.tools.localShell({}),
    } : undefined,
    maxRetries: 0,
    onError: () => {}, // errors are read from the stream below, not logged
  });
  const seen = {
    baseURL,
    reasoning: "",
    reasoningBlocks: [],
    text: "",
    textBlocks: [],
    toolCalls: [],
    toolResults: [],
    sources: [],
    finishReason: null,
    usage: null,
    totalUsage: null,
    providerMetadata: null,
    responseMetadata: [],
    errors: [],
    toolErrors: [],
    warnings: [],
    parts: [],
  };
  const reasoningBlocks = new Map();
  const textBlocks = new Map();
  try {
    for await (const part of result.fullStream) {
      seen.parts.push(part.type);
      switch (part.type) {
        case "start-step":
          seen.warnings.push(...(part.warnings ?? []));
          break;
        case "reasoning-start": {
          const block = { id: part.id, itemId: null, text: "", encryptedContent: null };
          reasoningMeta(block, part);
          reasoningBlocks.set(part.id, block);
          seen.reasoningBlocks.push(block);
          break;
        }
        case "reasoning-delta": {
          seen.reasoning += part.text;
          const block = reasoningBlocks.get(part.id);
          if (block !== undefined) {
            block.text += part.text;
            reasoningMeta(block, part);
          }
          break;
        }
        case "reasoning-end": {
          const block = reasoningBlocks.get(part.id);
          if (block !== undefined) reasoningMeta(block, part);
          break;
        }
        case "text-start": {
          const block = { id: part.id, text: "" };
          textBlocks.set(part.id, block);
          seen.textBlocks.push(block);
          break;
        }
        case "text-delta": {
          seen.text += part.text;
          const block = textBlocks.get(part.id);
          if (block !== undefined) block.text += part.text;
          break;
        }
        case "tool-call":
          seen.toolCalls.push({
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            providerExecuted: part.providerExecuted ?? false,
            invalid: part.invalid ?? false,
            itemId: openaiMeta(part).itemId ?? null,
          });
          break;
        case "tool-result":
          seen.toolResults.push({
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            output: part.output ?? null,
          });
          break;
        case "tool-error":
          seen.toolErrors.push({
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            error: plain(part.error),
          });
          break;
        case "source":
          seen.sources.push({ sourceType: part.sourceType, url: part.url ?? null, title: part.title ?? null });
          break;
        case "finish-step":
          seen.usage = part.usage;
          seen.providerMetadata = part.providerMetadata ?? null;
          seen.responseMetadata.push({ id: part.response?.id ?? null, modelId: part.response?.modelId ?? null });
          break;
        case "finish":
          seen.finishReason = part.finishReason;
          seen.totalUsage = part.totalUsage;
          break;
        case "error":
          seen.errors.push(plain(part.error));
          break;
      }
    }
  } catch (error) {
    seen.errors.push(plain(error));
  }
  console.log(JSON.stringify(seen));
}
