"""chunkspec in another repository (generator/vendoring/): vendored packages and their
checks, the pre-commit hook, an install, the wheel, a selection of protocols."""
