# make bench runs the benchmark suite (3-5 minutes) and rewrites
# docs/benchmarks.md, keeping docs/benchmarks-history.md (what the suite
# found and fixed) at its end. BENCHFLAGS passes more flags to
# cmd/quire-bench, such as BENCHFLAGS='-include scale.md' or -quick.
.PHONY: bench
bench:
	go run ./cmd/quire-bench -out docs/benchmarks.md -include docs/benchmarks-history.md $(BENCHFLAGS)
