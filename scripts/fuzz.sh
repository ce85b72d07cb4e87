#!/usr/bin/env bash
# Fuzz each of quire's fuzz targets in turn. `go test ./...` already runs
# every target's seeds (f.Add and testdata/fuzz/<target>/); this explores
# beyond them.
#
#   scripts/fuzz.sh            # 10s per target
#   FUZZTIME=60s scripts/fuzz.sh
#   scripts/fuzz.sh FuzzRead   # only targets whose name contains FuzzRead
#
# A failing input is written to <package>/testdata/fuzz/<target>/ and makes
# the script fail; commit it with the fix so it stays a regression test.
set -uo pipefail
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-10s}
only=${1:-}

# "package target".
targets=(
  "./valid FuzzFilePath"
  "./valid FuzzSlug"
  "./valid FuzzSkillManifest"
  "./valid FuzzVersionNumber"
  "./zipfile FuzzRead"
  "./httpapi FuzzWriteEndpoints"
  "./httpapi FuzzScanKeys"
  "./httpapi FuzzRenderBodyOnePass"
  "./render FuzzRender"
  "./gitproto FuzzUploadRequest"
  "./gitproto FuzzPushCommands"
  "./gitproto FuzzReceivePack"
  "./httpapi FuzzGitEndpoints"
)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  if [[ -n "$only" && "$name" != *"$only"* ]]; then continue; fi
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
    printf '%-22s ok    %s\n' "$name" "$(grep 'execs:' "$log" | tail -1 | sed 's/^fuzz: //')"
  else
    printf '%-22s FAIL\n' "$name"
    cat "$log"
    failed+=("$name")
  fi
done
if ((${#failed[@]})); then
  echo "failed: ${failed[*]}"
  exit 1
fi
