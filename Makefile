# make bench runs the benchmark suite (3-5 minutes) and rewrites
# docs/benchmarks.md. BENCHFLAGS passes flags to cmd/quire-bench, such as
# BENCHFLAGS='-include scale.md' or BENCHFLAGS=-quick.
.PHONY: bench
bench:
	go run ./cmd/quire-bench -out docs/benchmarks.md $(BENCHFLAGS)
