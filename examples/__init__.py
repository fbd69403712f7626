"""Runnable examples of the generated modules in use (see docs/streams.md)."""
