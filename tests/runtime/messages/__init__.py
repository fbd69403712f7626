"""The Anthropic Messages stream (generator/runtime/messages/): its events, reader,
accumulator and writer, the bridges to and from chat, and the spec against the SDK."""
