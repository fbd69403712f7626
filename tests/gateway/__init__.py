"""The gateway (generator/gateway/, `chunkspec serve`) over real HTTP."""
