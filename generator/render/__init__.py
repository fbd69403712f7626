"""Stages 3 and 4: the intermediate model rendered per target (`targets/`, the Jinja glue
in `templating`, the imports and runtime files of a package by `linking`, the `header`), the
other generated files (`schema`, `vendor_docs`, `examples`, `strategies`), then formatted
and written all or nothing (`emit`)."""
