"""How each chat backend reads a request, as its vendor file declares it
(`requests:`): where the output limit and the reasoning switch go, and where the
assistant's reasoning and its signatures go back on the next turn."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class _RequestDialect:
    """One chat backend's request rules. Paths are dotted keys of the JSON body (or,
    for `signature`, of a tool call)."""

    name: str
    max_tokens: str = "max_completion_tokens"
    """The key of the limit on generated tokens."""
    effort: str | None = None
    """Where a reasoning effort goes (`reasoning_effort`, `reasoning.effort`)."""
    budget: str | None = None
    """Where a budget of reasoning tokens goes (`reasoning.max_tokens`)."""
    switch: str | None = None
    """Where reasoning is turned on or off (`thinking.type`)."""
    switch_values: tuple[Any, Any] = (True, False)
    """The values of `switch` for on and off."""
    reasoning: str | None = None
    """The key of an assistant message that takes its reasoning text back."""
    reasoning_turns: str = "all"
    """Which assistant messages get it: "all", or "tool_calls" (those that call)."""
    placeholder: str | None = None
    """What such a message gets when it has no reasoning (None: the key is left out)."""
    details: str | None = None
    """The key of structured reasoning sent back verbatim (OpenRouter's
    `reasoning_details`); reasoning of another scheme is written as its text."""
    signature: str | None = None
    """Where a tool call carries the signature of the reasoning before it."""
    signature_calls: str = "first"
    """Which calls of a message carry it: "first" or "each"."""
    unsigned: str | None = None
    """The signature a call gets that has none this backend reads (Gemini's
    `skip_thought_signature_validator`); None: it gets none."""
    developer: bool = False
    """Whether it reads the `developer` role (else a developer message is `system`)."""
    accepts: tuple[str, ...] = ()
    """Other schemes whose signatures this backend reads back (its own always)."""
    system: str = "anywhere"
    """Where system messages may stand: "anywhere", or "first" (one, at the start: the
    later ones are joined into it, as many chat templates refuse a system message after
    the first turn)."""
    media: tuple[str, ...] = ("image", "file", "audio")
    """The media a message takes as content parts (`image_url`, `file`,
    `input_audio`): "image", "file", "audio"; others are left out and said."""
    cache_control: bool = False
    """Whether content parts take Anthropic's `cache_control` (a prompt-cache
    breakpoint), as it came; elsewhere one is left out and said."""

    def reads(self, scheme: str | None) -> bool:
        return scheme is not None and (scheme == self.name or scheme in self.accepts)


def _request_dialect(
    name: str | None, dialects: Sequence[_RequestDialect]
) -> _RequestDialect:
    """The dialect named `name` (None: the first, OpenAI's)."""
    if name is None:
        return dialects[0]
    for dialect in dialects:
        if dialect.name == name:
            return dialect
    known = ", ".join(repr(d.name) for d in dialects)
    raise ValueError(f"chat request dialect must be one of {known}, not {name!r}")
