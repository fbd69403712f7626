"""The gateway: Claude Code, Codex and the SDKs on any backend. One server speaks the
three streamed protocols to its clients (`/v1/messages`, `/v1/responses`,
`/v1/chat/completions`) and any of them to its upstreams, each with its dialect, and
writes each request and stream across with the generated msgspec modules
(docs/gateway.md). `chunkspec serve` (in a checkout `python -m generator serve`) runs it.

- `config`: the TOML file, flags and environment, checked with the line of each problem.
- `routing`: which upstream and model a client's model id goes to.
- `policy`: what a request may lose on the way (dropped and said) and what it may not
  (refused).
- `translate`: a client's request as its upstream's.
- `errors`: error bodies in each protocol's shape.
- `relay`: the upstream's stream written as the client's, and its log line.
- `app`: the Starlette application; `serve`: the command.
"""
