#!/bin/sh
# npm's `prepare` (runs in every `npm ci`): builds dist/ with TypeScript. The service install
# (`npm ci --omit=dev`) has no TypeScript and uses the dist/ built beforehand (README).
if [ -x node_modules/.bin/tsc ]; then
  exec node_modules/.bin/tsc -p tsconfig.json
fi
if [ -f dist/cli.js ]; then
  echo "prepare: TypeScript not installed (--omit=dev): using the dist/ built beforehand"
  exit 0
fi
echo "prepare: dist/ is missing and TypeScript is not installed: build on a machine with the dev dependencies first (npm ci && npm run build)" >&2
exit 1
