#!/bin/sh
# npm's `prepare` (runs in every `npm ci`): builds dist/ with TypeScript. The service install
# (`npm ci --omit=dev --workspaces=false`) has no TypeScript and uses the dist/ built beforehand
# (README). The workspace packages (packages/*) build their own dist/ with their own prepare.
# npm also runs this for node_modules/fieldgate, the packages' link to the root (it sets
# npm_package_resolved only there): the root's own run builds, so the link's run is skipped.
if [ -n "${npm_package_resolved+set}" ]; then
  exit 0
fi
if [ -x node_modules/.bin/tsc ]; then
  exec node_modules/.bin/tsc -p tsconfig.json
fi
if [ -f dist/cli.js ]; then
  echo "prepare: TypeScript not installed (--omit=dev): using the dist/ built beforehand"
  exit 0
fi
echo "prepare: dist/ is missing and TypeScript is not installed: build on a machine with the dev dependencies first (npm ci && npm run build)" >&2
exit 1
