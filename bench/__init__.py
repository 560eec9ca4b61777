"""Benchmarks: `make bench` (all) or `make bench BENCH=name` (one). They measure; tests assert."""
