"""chunkspec's generator: spec/ -> a typed intermediate model -> templates/ -> generated/."""
