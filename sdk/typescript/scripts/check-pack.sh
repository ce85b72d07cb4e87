#!/usr/bin/env bash
# Packaging check: npm pack makes a tarball that a scratch project
# installs (offline, from the file), imports in Node and type-checks with
# tsc --strict. TSC is the TypeScript compiler to use (type-check skipped
# when unset).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
tarball=$(npm pack --silent --pack-destination "$scratch")
cd "$scratch"
printf '{"name":"scratch","private":true,"type":"module"}\n' > package.json
npm install --silent --offline --no-audit --no-fund "./$tarball" >/dev/null
node --input-type=module -e '
import { Client, parseTemplate, toOpenAIMessages, VERSION } from "@quire/sdk";
const out = parseTemplate("Hello {{name}}").render({ name: "Ann" });
if (out.text !== "Hello Ann") throw new Error(out.text);
new Client("http://127.0.0.1:1").prompts();
console.log(`ci: @quire/sdk ${VERSION} packed (${process.argv[1]}), installed and imported`);
' "$tarball"
if [ -n "${TSC:-}" ]; then
  cp "$OLDPWD/scripts/use.ts" .
  "$TSC" --strict --noEmit --module NodeNext --moduleResolution NodeNext --target ES2022 --lib ES2022,DOM use.ts
  echo "ci: @quire/sdk type declarations checked by tsc --strict in a scratch project"
fi
