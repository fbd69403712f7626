"""End to end: captured streams over real HTTP read by real clients, and the benchmarks."""
