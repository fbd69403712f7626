"""The code every generated package runs on, as ordinary Python source.

Each module here is linted, formatted (at the generated code's line length) and
type-checked like any other source, and has tests of its own. Generation copies the
files a package's modules use, and every file those import, into the package's
`_runtime/`, as they are (see `generator/render/linking.py`): a package copied into
another repository still works with nothing but its one dependency, and a change of one
line here is a change of one line in each package's copy.

Rules for these files, so that a copy works where it lands:
- imports of sibling files are relative (`from ..parts import Part`), and nothing
  outside the standard library but the one library of the target that uses the file;
- names the generated code defines per spec (the chunk types, `loads`) never appear
  here: they are passed in (`_ChatEvents(loads)`) or filled in by a subclass;
- names are private (`_name`) unless the generated modules export them.
"""
