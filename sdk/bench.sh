#!/usr/bin/env bash
# The SDKs' benchmark (make bench-sdk): each SDK's cached render of the
# two-variable prompt against a real quire serve, written as the markdown
# fragment docs/benchmarks-sdk.md that cmd/quire-bench includes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/benchmarks-sdk.md}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -z "${QUIRE_BIN:-}" ]; then
  go build -o "$tmp/quire" ./cmd/quire
  export QUIRE_BIN="$tmp/quire"
fi
rows=""
if command -v node >/dev/null; then rows+="$(cd sdk/typescript && node bench/render.bench.js --markdown)"$'\n'; fi
if command -v python3 >/dev/null; then rows+="$(cd sdk/python && python3 -m bench.bench_render --markdown)"$'\n'; fi
cat > "$out" <<MD
## SDKs (TypeScript and Python)

\`make bench-sdk\` (sdk/bench.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average at start $(cut -d' ' -f1-3 /proc/loadavg). Each SDK's prompt cache
fetches the two-variable prompt of the Go SDK's \`BenchmarkPromptCacheRender\`
(\`Hello {{name}}, here is a short note about {{topic}}.\`) once from a real
\`quire serve\`, then renders it locally from memory: the median of five
rounds of 20,000 calls, in process. Requests is what the server's
\`quire_http_requests_total\` counted over the whole run: the one first fetch,
and none for the cached reads within the TTL.

| runtime | cached render | cached get | goal (render) | requests |
|---|---|---|---|---|
${rows%$'\n'}
MD
echo "wrote $out"
