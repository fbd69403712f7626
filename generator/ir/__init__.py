"""Stages 1 and 2: the spec files loaded and checked one by one (`load`, `yamlfile`,
`typeexpr`), then all at once into the typed intermediate model (`build`, `merging`,
`naming`), which knows no target (`model`). Errors name a file and a line (`errors`)."""
