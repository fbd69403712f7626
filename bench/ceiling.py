"""The ceiling of the pydantic target with every vendor's fields: openai-python's own
chunk models, given as many more fields as the all-vendor models declare.

A pydantic model stores every declared field on every instance, and pydantic-core fills
each absent one with its default on every validation and looks at each on every
`exclude_unset` serialisation. The padded models are openai-python's, as fast as
openai-python is, plus only that cost: no strict types, no open enums, no relaxations,
no error reporting. What they reach is what any pydantic model that declares every
vendor's fields, and whose instances are indistinguishable from validated ones, can
reach.
"""

from __future__ import annotations

from types import GenericAlias
from typing import Any

from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta
from pydantic import BaseModel, create_model

from bench.targets import TARGETS

_ALL_VENDORS = TARGETS["pydantic"]


def _padded(base: type[BaseModel], like: type[BaseModel], **fields: Any) -> type[BaseModel]:
    """`base` with `fields` and as many optional fields (`str | None = None`) as `like`
    declares more."""
    padding = len(like.model_fields) - len(base.model_fields)
    extra: dict[str, Any] = {f"padding_{n}": (str | None, None) for n in range(padding)}
    return create_model(f"Padded{base.__name__}", __base__=base, **fields, **extra)


PaddedDelta = _padded(ChoiceDelta, _ALL_VENDORS.ChoiceDelta)
PaddedChoice = _padded(Choice, _ALL_VENDORS.Choice, delta=(PaddedDelta, ...))
PaddedChunk = _padded(
    ChatCompletionChunk,
    _ALL_VENDORS.ChatCompletionChunk,
    choices=(GenericAlias(list, (PaddedChoice,)), ...),
)
"""openai-python's chunk, its choice and its delta, each padded to the field count of the
all-vendor pydantic model."""
