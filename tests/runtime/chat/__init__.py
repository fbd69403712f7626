"""The chat-completions stream (generator/runtime/chat/): chunks read, accumulated and
summarised, their meanings in every dialect, token frames, the mutation fuzzer and the
differential tests against openai-python."""
