"""chunkspec's generator: spec/ -> a typed intermediate model -> templates/ -> generated/.

The subpackages are the pipeline, each importing only from those before it: `runtime`
(the code every module holds), `ir` (load and build the intermediate model), `render`
(per target, then format and write), `vendoring` (one module for another repository) and
`captures` (captured streams read, inspected and drafted into vendor files). The command
line (`__main__`) and `pipeline` sit on top.
"""
