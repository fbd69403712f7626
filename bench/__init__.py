"""Benchmarks run by `make bench`; they report ratios and never assert wall times."""
