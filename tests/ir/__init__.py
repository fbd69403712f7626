"""The spec as the generator reads it (generator/ir/): the format's JSON Schema and the
errors a bad spec gives."""
