// Reads chat-completion streams with the Vercel AI SDK's OpenAI-compatible provider, as
// a Node client of a gateway would: for each base URL on the command line, the reasoning
// and the text it sees, printed as one JSON object per line.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";

for (const baseURL of process.argv.slice(2)) {
  const provider = createOpenAICompatible({ name: "gateway", baseURL, apiKey: "x" });
  const result = streamText({ model: provider("m"), prompt: "hi", maxRetries: 0 });
  let reasoning = "";
  let text = "";
  let error = null;
  for await (const part of result.fullStream) {
    if (part.type === "reasoning-delta") reasoning += part.text;
    else if (part.type === "text-delta") text += part.text;
    else if (part.type === "error") error = String(part.error);
  }
  console.log(JSON.stringify({ baseURL, reasoning, text, error }));
}
