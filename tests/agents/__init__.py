"""Real agents as judges of the gateway: Claude Code, Codex and openai-agents."""
