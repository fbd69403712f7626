"""The Anthropic Messages streaming protocol, as JSON data: its events read into `Part`s
(`reader.py`), added up into the final Message (`accumulate.py`), and any protocol's
`Part`s written as its events (`writer.py`).

These files follow the rules of `generator/runtime/__init__.py`."""
