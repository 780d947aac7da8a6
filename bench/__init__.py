"""Benchmarks: `make bench` (python -m bench [NAME ...]) runs every bench_*.py module."""
