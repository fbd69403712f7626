"""The chat protocol's own runtime: what a module of chat chunks holds that another
protocol's does not."""
