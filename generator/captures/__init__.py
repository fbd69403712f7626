"""Captured streams: read (`capture`), compared with the spec (`inspection`), drafted into
a vendor file (`drafting`), or a vendor file started by hand (`scaffold`)."""
