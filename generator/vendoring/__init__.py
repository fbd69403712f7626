"""One module for another repository: written and sealed (`vendored`), checked for hand
edits and staleness (`check`), with the chunkspec to install to update it (`revision`)."""
