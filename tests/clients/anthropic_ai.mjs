// Reads Anthropic Messages streams with the Vercel AI SDK's Anthropic provider
// (`@ai-sdk/anthropic`) through `streamText`, as a Node client of a gateway would: for
// each base URL on the command line (the provider posts to `<baseURL>/messages`), what it
// read, printed as one JSON object per line:
//
//   baseURL, reasoning (the thinking text, joined), reasoningBlocks ([{id, text,
//   signature, redactedData}] from the parts' providerMetadata.anthropic), text,
//   toolCalls ([{toolCallId, toolName, input, providerExecuted, invalid}]: `input` is the
//   parsed JSON value, or the text when it is not JSON), toolResults (those a server ran),
//   finishReason (the SDK's: "stop", "tool-calls", "length", ...), usage (of the last
//   step: inputTokens, outputTokens, totalTokens, reasoningTokens, cachedInputTokens),
//   totalUsage, providerMetadata (of the last step: anthropic.usage is the raw usage,
//   message_start's merged with message_delta's; cacheCreationInputTokens, stopSequence),
//   errors, toolErrors, warnings, parts (the types of the stream parts, in order).
//
// Only the server tools the provider knows are declared (web_search, web_fetch and
// code_execution: without them streamText fails on the server's tool calls with a
// TypeError), so it marks every tool call a client should run `invalid` (and adds a
// `tool-error`, NoSuchToolError); the call's name and input are as read.
import { createAnthropic } from "@ai-sdk/anthropic";
import { streamText } from "ai";

function plain(error) {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return error === undefined ? null : error;
}

function anthropicMeta(part) {
  return part.providerMetadata?.anthropic ?? {};
}

for (const baseURL of process.argv.slice(2)) {
  const provider = createAnthropic({ baseURL, apiKey: "x" });
  const result = streamText({
    model: provider("m"),
    prompt: "hi",
    maxOutputTokens: 1024, // else a warning: "m" is no model the provider knows
    tools: {
      web_search: provider.tools.webSearch_20250305(),
      web_fetch: provider.tools.webFetch_20250910(),
      code_execution: provider.tools.codeExecution_20250825(),
    },
    maxRetries: 0,
    onError: () => {}, // errors are read from the stream below, not logged
  });
  const seen = {
    baseURL,
    reasoning: "",
    reasoningBlocks: [],
    text: "",
    toolCalls: [],
    toolResults: [],
    finishReason: null,
    usage: null,
    totalUsage: null,
    providerMetadata: null,
    errors: [],
    toolErrors: [],
    warnings: [],
    parts: [],
  };
  const blocks = new Map();
  try {
    for await (const part of result.fullStream) {
      seen.parts.push(part.type);
      switch (part.type) {
        case "start-step":
          seen.warnings.push(...(part.warnings ?? []));
          break;
        case "reasoning-start": {
          const block = { id: part.id, text: "", signature: null, redactedData: null };
          const meta = anthropicMeta(part);
          if (meta.redactedData != null) block.redactedData = meta.redactedData;
          if (meta.signature != null) block.signature = meta.signature;
          blocks.set(part.id, block);
          seen.reasoningBlocks.push(block);
          break;
        }
        case "reasoning-delta": {
          seen.reasoning += part.text;
          const block = blocks.get(part.id);
          if (block !== undefined) {
            block.text += part.text;
            const meta = anthropicMeta(part);
            if (meta.signature != null) block.signature = meta.signature;
            if (meta.redactedData != null) block.redactedData = meta.redactedData;
          }
          break;
        }
        case "text-delta":
          seen.text += part.text;
          break;
        case "tool-call":
          seen.toolCalls.push({
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            providerExecuted: part.providerExecuted ?? false,
            invalid: part.invalid ?? false,
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
        case "finish-step":
          seen.usage = part.usage;
          seen.providerMetadata = part.providerMetadata ?? null;
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
