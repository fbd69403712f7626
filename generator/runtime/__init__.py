"""The code every generated module holds, as ordinary Python source.

Each module here is linted, formatted (at the generated code's line length) and
type-checked like any other source, and has tests of its own. Generation copies into a
generated module the top-level definitions of these files that its code uses, verbatim,
with the imports they need (see `generator/render/inline.py`): a module copied on its
own into another repository still works with nothing but its one dependency.

Rules for these files, so that copying stays verbatim and correct:
- a file holds imports, then definitions; imports of sibling files
  (`generator.runtime.*`) are for type checking here and are dropped on copy;
- names the generated code defines per spec (the chunk types, `loads`) never appear
  here: they are passed in (`_ChatEvents(loads)`) or filled in by a subclass;
- names are private (`_name`) unless the generated module exports them.
"""
