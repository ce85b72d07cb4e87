# make bench runs the whole benchmark suite and rewrites docs/benchmarks.md:
# the scale measurement (cmd/quire-scale, on a data root of 10,000 skills
# and 2,000 prompts generated into SCALE_DATA the first time: about 8 GiB
# and 3 minutes, then kept; a generation that stopped half-way fails the
# next one: remove SCALE_DATA), written to docs/benchmarks-scale.md, then
# cmd/quire-bench (hot path, allocations, writes, git: 3-5 minutes), which
# includes it and docs/benchmarks-history.md (what the suite found and
# fixed) at its end.
#
# make bench-fast skips the scale measurement and includes the last one,
# and the SDKs' figures of the last make bench-sdk (docs/benchmarks-sdk.md:
# sdk/bench.sh, each SDK's cached render against a real quire serve).
# BENCHFLAGS passes more flags to cmd/quire-bench, such as -quick or
# -cpuprofile hot.pprof.
SCALE_DATA ?= /tmp/quire-scale-data

.PHONY: test bench bench-fast bench-scale bench-sdk sdk-generate

# make test is the test command (README, .ci/run): every package with the
# race detector in -short mode; then without it what the detector only
# slows: the crash, high-availability and end-to-end tests (their servers
# are subprocesses; the crash tests build them with -race when
# QUIRE_CRASH_RACE=1), the sequential heavy tests of httpapi and client
# and the tests web and mcp drive from another program (a browser, the
# Inspector, the TypeScript SDK; all skip themselves under -race), and
# the benchmark and scale
# tools' own tests, since they measure.
test:
	@# Under -race a package's tests use about one core on average (they
	@# wait on git, servers and timers): four test binaries at once keep
	@# both cores busy. httpapi's alone take as long as all the others, so
	@# its tests run as two halves from the start (A-G and the rest, about
	@# equal), beside the other packages. Each one's output is printed whole.
	@out=$$(mktemp -d); \
	go test -short -race -count=1 -timeout 30m -run '^Test[A-G]' ./httpapi >$$out/h1 2>&1 & h1=$$!; \
	go test -short -race -count=1 -timeout 30m -run '^(Test[^A-G]|Fuzz|Example)' ./httpapi >$$out/h2 2>&1 & h2=$$!; \
	go test -p 2 -short -race -count=1 -timeout 30m $$(go list ./... | grep -v -E '/(httpapi|internal/(crashtest|hatest|e2e))$$'); r=$$?; \
	wait $$h1; r1=$$?; wait $$h2; r2=$$?; cat $$out/h1 $$out/h2; rm -rf $$out; \
	test $$r = 0 && test $$r1 = 0 && test $$r2 = 0
	@# The runs without -race share the machine: each waits mostly on
	@# other programs (servers, browsers, node), so two at once finish
	@# sooner than one after the other. Each one's output is printed whole.
	@out=$$(mktemp -d); \
	go test -short -count=1 -timeout 30m ./internal/crashtest ./internal/hatest ./internal/e2e >$$out/a 2>&1 & a=$$!; \
	go test -short -count=1 -timeout 30m -run '^(TestAuthorizationMatrix|TestMustacheSpecThroughAPI|TestPasswordHashCost|TestHostileRequests|TestBadJSON|TestBadFilePaths|TestBadVersionNumbers|TestUnknownResources|TestSkillManifestRules|TestSizeLimits|TestRequestRequired|TestDependentsWide|TestUploadZip|FuzzWriteEndpoints|TestGitPushRefusals|TestGitPushPathRefusals|TestGitPushHostileObjects|TestPushInflatedLimit|TestRenderMatchesServer|TestBrowser.*|TestBridge.*|TestInspectorCLI|TestTypeScript.*)$$' ./httpapi ./client ./web ./mcp >$$out/b 2>&1 & b=$$!; \
	wait $$a; ra=$$?; wait $$b; rb=$$?; cat $$out/a $$out/b; rm -rf $$out; \
	test $$ra = 0 && test $$rb = 0
	go test -count=1 -run 'TestQuickRun|TestGenerateAndMeasure' ./cmd/quire-bench ./cmd/quire-scale

bench: bench-scale bench-fast

bench-fast:
	go run ./cmd/quire-bench -out docs/benchmarks.md -include docs/benchmarks-scale.md -include docs/benchmarks-sdk.md -include docs/benchmarks-history.md $(BENCHFLAGS)

bench-scale:
	test -f $(SCALE_DATA)/.generated || { go run ./cmd/quire-scale generate -data $(SCALE_DATA) \
		-skills 10000 -versions 5 -files 20 -prompts 2000 -prompt-versions 10 && touch $(SCALE_DATA)/.generated; }
	go run ./cmd/quire-scale measure -data $(SCALE_DATA) -out docs/benchmarks-scale.md

bench-sdk:
	sdk/bench.sh docs/benchmarks-sdk.md

# sdk-generate remakes what the SDKs generate from the server: the
# conformance corpus of the Mustache engine, the TypeScript types of the
# OpenAPI document (openapi-typescript, from the CI npm cache) and the
# Python client's methods. .ci/run checks each is current.
SDK_NPM ?= $(or $(QUIRE_CI_NPM),$(HOME)/.cache/quire-ci-npm)
sdk-generate:
	go test ./render -run TestConformanceCorpus -update-conformance
	test -x $(SDK_NPM)/node_modules/.bin/openapi-typescript || npm install --prefix $(SDK_NPM) openapi-typescript@7.13.0 typescript@5
	$(SDK_NPM)/node_modules/.bin/openapi-typescript internal/apiclient/openapi.json -o sdk/typescript/src/api.d.ts
	python3 sdk/python/gen_api.py
