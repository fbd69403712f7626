"""The Anthropic Messages streaming protocol, as JSON data: its events read into `Part`s
(`reader.py`), added up into the final Message (`accumulate.py`), and any protocol's
`Part`s written as its events (`writer.py`).

These files follow the rules of `generator/runtime/__init__.py`; they import only from
the runtime's top level (`from ..parts import Part`), and every name they define
carries the family (`_MessagesReader`), since a generated module is one namespace."""
