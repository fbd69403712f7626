"""The OpenAI Responses stream (generator/runtime/responses/): its events, reader,
accumulator and writer, the bridges to and from chat, and the spec against the SDK."""
