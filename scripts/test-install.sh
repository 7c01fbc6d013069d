#!/usr/bin/env bash
# `npm run test:install`: the README's install as a new user does it. Clones the committed HEAD
# into a fresh directory and runs `npm ci` with a fresh HOME (no ~/.npmrc, empty npm cache) and an
# environment holding only PATH, HOME, LANG and TMPDIR (so no npm_config_*/NPM_CONFIG_*,
# NODE_OPTIONS, ...), with every C/C++ toolchain entry point on PATH replaced by a trap that fails
# and records the call. Then `fieldgate --help` and `fieldgate emulator`, which must answer. Then
# the service install (`npm ci --omit=dev --workspaces=false` on the dist/ just built): node_modules
# must hold neither the workspace packages (@fieldgate/emulator, @fieldgate/simulator) nor aedes,
# `fieldgate validate` and the daemon must run, and `fieldgate emulator`, `simulate` and `demo`
# must answer one line and a non-zero exit.
# Prints the time `npm ci` took. Exit 0 only if all of it worked and nothing reached for a compiler.
set -euo pipefail
repo="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
commit="$(git -C "$repo" rev-parse HEAD)"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "test-install: note: uncommitted changes are not part of the test (it clones HEAD $commit)"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fieldgate-install-XXXXXX")"
emulator_pid=""
cleanup() {
  if [ -n "$emulator_pid" ]; then kill "$emulator_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Compilers and build tools node-gyp or cmake-js would call: each one fails and leaves a trace.
traps="$work/no-toolchain"
mkdir -p "$traps" "$work/home" "$work/tmp"
for tool in cc c++ gcc g++ clang clang++ make gmake cmake python python3 node-gyp; do
  printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\necho "test-install: %s called during npm ci" >&2\nexit 1\n' \
    "$tool" "$traps" "$tool" > "$traps/$tool"
  chmod +x "$traps/$tool"
done
node_dir="$(dirname "$(command -v node)")"
clean_env=(env -i "PATH=$traps:$node_dir:/usr/bin:/bin" "HOME=$work/home" "LANG=C.UTF-8" "TMPDIR=$work/tmp")

git clone --quiet --no-checkout "$repo" "$work/fieldgate"
git -C "$work/fieldgate" checkout --quiet --detach "$commit"
cd "$work/fieldgate"

echo "test-install: npm's configuration in the clean environment:"
"${clean_env[@]}" npm config ls | sed 's/^/  /'

fail() {
  echo "test-install: FAILED, $*" >&2
  exit 1
}

# Runs `npm ci ARGS` in the clean environment; sets `seconds`; fails on any toolchain call.
npm_ci() {
  local start
  start=$(date +%s%N)
  "${clean_env[@]}" npm ci --no-audit --no-fund "$@"
  seconds=$(( ($(date +%s%N) - start) / 1000000000 ))
  if [ -s "$traps/calls" ]; then fail "npm ci $* reached for a toolchain: $(cat "$traps/calls")"; fi
  local built
  built="$(find node_modules -path '*/build/Release/*.node' -o -path '*/build/Debug/*.node' | head -5)"
  if [ -n "$built" ]; then fail "native modules were compiled: $built"; fi
}

# `fieldgate --help`, then the emulator on free ports until interface A answers.
run_fieldgate() {
  local help http_url="" answer
  help="$("${clean_env[@]}" node bin/fieldgate.js --help)"
  case "$help" in
    *"usage: fieldgate <command>"*) ;;
    *) fail "fieldgate --help printed: $help" ;;
  esac
  "${clean_env[@]}" node bin/fieldgate.js emulator --http-port 0 --mqtt-port 0 --tcp-port 0 > "$work/emulator.out" 2>&1 &
  emulator_pid=$!
  for _ in $(seq 1 100); do
    http_url="$(grep -o 'http  http://127.0.0.1:[0-9]*' "$work/emulator.out" | sed 's/^http  //' || true)"
    [ -n "$http_url" ] && break
    kill -0 "$emulator_pid" 2>/dev/null || break
    sleep 0.2
  done
  [ -n "$http_url" ] || fail "the emulator did not start: $(cat "$work/emulator.out")"
  # Any JSON answer of interface A proves the emulator serves; the missing credentials are on purpose.
  answer="$(node -e "fetch(process.argv[1] + '/api/v1/access_token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(async (r) => console.log(r.status, await r.text()))" "$http_url")"
  echo "test-install: emulator at $http_url answered: $answer"
  case "$answer" in
    "200 {"*) ;;
    *) fail "unexpected emulator answer" ;;
  esac
  kill "$emulator_pid"
  wait "$emulator_pid" 2>/dev/null || true
  emulator_pid=""
}

# The service install holds the daemon only: no TypeScript, no workspace package, no aedes; the
# daemon validates and runs a site (loopback, nothing listening); the dev commands say what is missing.
check_service_install() {
  local unwanted out code
  unwanted="$(cd node_modules && ls -d typescript aedes @fieldgate fieldgate 2>/dev/null | tr '\n' ' ' || true)"
  [ -z "$unwanted" ] || fail "the service install holds $unwanted"
  "${clean_env[@]}" node bin/fieldgate.js --help > /dev/null || fail "fieldgate --help failed"
  mkdir -p "$work/state"
  cat > "$work/site.yaml" <<SITE
gateway:
  stateDir: $work/state
  health: { enabled: false }
  cloud: { mqttUrl: "mqtt://127.0.0.1:9", apiBaseUrl: "http://127.0.0.1:9", projectKey: install-check }
buses:
  - { name: plc-net, kind: tcp, host: 127.0.0.1, port: 9 }
devices:
  - name: plc
    bus: plc-net
    unitId: 1
    cloud: { accessToken: install-check-token }
    points:
      - { id: level, table: input, address: 1, type: int16 }
SITE
  out="$("${clean_env[@]}" node bin/fieldgate.js validate "$work/site.yaml" 2>&1)" || fail "fieldgate validate failed: $out"
  echo "test-install: service install: fieldgate validate: ${out%%$'\n'*}"
  # The daemon for 3 s: it must start, stay up and stop cleanly on SIGTERM.
  "${clean_env[@]}" timeout -s TERM 3 node bin/fieldgate.js run --config "$work/site.yaml" > "$work/run.out" 2>&1 && code=0 || code=$?
  grep -q '"msg":"gateway started"' "$work/run.out" || fail "the daemon did not start: $(head -c 2000 "$work/run.out")"
  grep -q '"msg":"gateway stopped"' "$work/run.out" || fail "the daemon did not run until SIGTERM (exit $code): $(head -c 2000 "$work/run.out")"
  echo "test-install: service install: the daemon started and stopped on SIGTERM"
  for command in emulator simulate demo; do
    out="$("${clean_env[@]}" node bin/fieldgate.js "$command" 2>&1)" && code=0 || code=$?
    [ "$code" -ne 0 ] || fail "fieldgate $command exited 0 in the service install"
    case "$out" in
      *$'\n'*) fail "fieldgate $command printed more than one line: $out" ;;
      "fieldgate $command: @fieldgate/"*" is a development package"*) ;;
      *) fail "fieldgate $command printed: $out" ;;
    esac
    echo "test-install: service install: fieldgate $command (exit $code): $out"
  done
}

# 1. The README's set-up: `npm ci` with the dev dependencies (builds dist/).
npm_ci
ci_seconds=$seconds
run_fieldgate
native="$(cd node_modules && ls -d @libsql/linux-* @koromix/koffi-linux-* 2>/dev/null | tr '\n' ' ')"

# 2. The README's service install: `npm ci --omit=dev --workspaces=false` on the dist/ built in step 1.
npm_ci --omit=dev --workspaces=false
omit_dev_seconds=$seconds
check_service_install

printf 'test-install: OK, commit %s: npm ci took %d s (fresh HOME, empty npm cache, no toolchain), then npm ci --omit=dev --workspaces=false %d s (warm cache); prebuilt packages: %s\n' \
  "${commit:0:7}" "$ci_seconds" "$omit_dev_seconds" "$native"
