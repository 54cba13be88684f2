"""Benchmarks behind `make bench`; results are printed as a table and saved under bench/results/."""
