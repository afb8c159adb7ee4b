"""Benchmarks: speed and memory targets are measured here, never in timed tests (see docs/benchmarks.md)."""
