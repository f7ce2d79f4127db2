## Benchmarks (not part of make check): make bench.
