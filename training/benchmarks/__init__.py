"""Benchmarks and soak tests: scripts that print their figures."""
