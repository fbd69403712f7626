"""What the generator renders (generator/render/): golden records per feature, the JSON
Schema of a chunk, and what is particular to a target."""
