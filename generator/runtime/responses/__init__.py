"""The Responses protocol's own runtime: its events, reader, accumulator and writer."""
