"""Runnable examples of the generated packages in use (see docs/streams.md)."""
