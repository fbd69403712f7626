"""The one error a bad spec produces: a message that names the file and line."""

from __future__ import annotations

from pathlib import Path


class SpecError(Exception):
    """A spec file is malformed; carries where, so the message reads `file:line: what`."""

    def __init__(self, message: str, file: Path | str, line: int | None = None) -> None:
        self.message = message
        self.file = str(file)
        self.line = line
        where = self.file if line is None else f"{self.file}:{line}"
        super().__init__(f"{where}: {message}")
