"""The runtime (generator/runtime/) as the generated modules run it: what every protocol
shares (server-sent events, the stream layer, JSON, parts, hostile input) and the bridges
between protocols; each protocol's own in the folder of its name."""
