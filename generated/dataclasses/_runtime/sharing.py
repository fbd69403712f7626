"""The table of vocabulary values (a logprob's token) that objects share one copy of."""

# Private names are shared between these files and used by the generated code.
# pyright: reportPrivateUsage=false, reportUnusedFunction=false, reportUnusedClass=false

from __future__ import annotations

from typing import Final

_KEPT: Final[dict[str, str]] = {}
"""One copy of each value of the keys whose values the spec says come from a small
vocabulary (a logprob's token), shared by every object that holds it. Not `sys.intern`:
some Python versions never free an interned string."""
_KEEP_AT_MOST: Final = 10_000
"""Past this many values the table starts again: it bounds memory, never correctness."""
