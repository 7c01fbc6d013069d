#!/usr/bin/env bash
# fieldgate as aarch64 on an amd64 Debian machine, under qemu-user (see docs/arm64.md).
#   test/arm64/run.sh [all|prepare|unit|e2e|smoke|bench]     (npm run test:arm64 runs `all`)
# all: unit tests + 60 s end-to-end run; smoke: a 30 s end-to-end run (CI); bench: southbound
# benchmark and daemon CPU per 1,000 points, native against emulated in the same run.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
MODE="${1:-all}"

# Node for arm64: the runtime the packages ship, pinned with the registry's integrity.
# shellcheck source=../../scripts/node-runtime.sh
. "$REPO/scripts/node-runtime.sh"
STAGE="${FIELDGATE_ARM64_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fieldgate-arm64}"
SYSROOT=/usr/aarch64-linux-gnu
APT_PACKAGES="qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross socat"

say() { printf 'arm64: %s\n' "$*" >&2; }

install_apt_packages() {
  dpkg -s $APT_PACKAGES >/dev/null 2>&1 && return
  say "installing $APT_PACKAGES"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends $APT_PACKAGES
}

# The arm64 node, fetched with npm from the npm registry and checked (scripts/node-runtime.sh).
NODE_ARM64=""
fetch_node() {
  NODE_ARM64="$(fieldgate_node_dir arm64)/bin/node"
}

# Wrappers that run the arm64 node (and esbuild, for tsx) under qemu. Without binfmt_misc (as in
# containers) the kernel cannot exec an aarch64 binary by itself, so a child process the arm64
# node starts must be a wrapper too: tsx finds esbuild through ESBUILD_BINARY_PATH.
write_wrappers() {
  mkdir -p "$STAGE/bin"
  printf '#!/bin/sh\nexec qemu-aarch64-static -L %s "%s" "$@"\n' "$SYSROOT" "$NODE_ARM64" >"$STAGE/bin/node-arm64"
  printf '#!/bin/sh\nexec qemu-aarch64-static "%s" "$@"\n' "$STAGE/app/node_modules/@esbuild/linux-arm64/bin/esbuild" >"$STAGE/bin/esbuild-arm64"
  chmod +x "$STAGE/bin/node-arm64" "$STAGE/bin/esbuild-arm64"
  local arch
  arch="$("$STAGE/bin/node-arm64" -p 'process.arch + " " + process.version')"
  [ "$arch" = "arm64 v$FIELDGATE_NODE_VERSION" ] || { say "the arm64 node reports '$arch'"; exit 1; }
  say "node under qemu: $arch"
}

# $STAGE/app: a copy of the checkout (tracked and untracked, not ignored files) with an arm64
# node_modules that npm picks from the lockfile for linux/arm64/glibc, as Dockerfile.arm64's
# build stage does. The checkout's own node_modules is never touched.
stage_app() {
  local app="$STAGE/app"
  mkdir -p "$app"
  find "$app" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
  (cd "$REPO" && git ls-files -co --exclude-standard -z | grep -zv '^node_modules$' | tar cf - --null -T -) | tar xf - -C "$app"
  local lock_sum
  lock_sum="$(sha256sum "$app/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$app/node_modules/.fieldgate-lock" 2>/dev/null)" != "$lock_sum" ]; then
    say "npm ci for linux/arm64/glibc in $app"
    (cd "$app" && npm ci --cpu=arm64 --os=linux --libc=glibc --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$lock_sum" >"$app/node_modules/.fieldgate-lock"
  fi
  (cd "$app" && npm run build --silent)
}

run_unit() {
  # threads pool: a forked child would exec an aarch64 binary. Timeouts x4: vitest's 30 s is a
  # guard against hangs, and the property tests run ~5-10x longer under emulation.
  say "unit tests under qemu"
  (cd "$STAGE/app" && NO_COLOR=1 "$STAGE/bin/node-arm64" node_modules/vitest/vitest.mjs run test/unit \
    --pool=threads --testTimeout=120000 --hookTimeout=120000)
}

run_e2e() {
  say "end to end: the arm64 daemon with the emulator and a simulated RTU device over a socat pty, $1 s"
  (cd "$REPO" && node --conditions=fieldgate-source --import tsx test/arm64/e2e.ts --node "$STAGE/bin/node-arm64" --app "$STAGE/app" --seconds "$1")
}

run_bench() {
  (cd "$REPO" && npm run build --silent)
  say "southbound benchmark, native then under qemu"
  (cd "$REPO" && node --optimize-for-size --v8-pool-size=1 --single-threaded --conditions=fieldgate-source --import tsx test/bench/run.ts southbound)
  (cd "$STAGE/app" && ESBUILD_BINARY_PATH="$STAGE/bin/esbuild-arm64" "$STAGE/bin/node-arm64" --optimize-for-size --v8-pool-size=1 --single-threaded --conditions=fieldgate-source --import tsx test/bench/run.ts southbound)
  say "daemon CPU per 1,000 points polled, native then under qemu"
  (cd "$REPO" && node --conditions=fieldgate-source --import tsx test/arm64/e2e.ts --node "$(command -v node)" --app "$REPO" --seconds 60)
  run_e2e 60
}

main() {
  mkdir -p "$STAGE"
  install_apt_packages
  fetch_node
  stage_app
  write_wrappers
  case "$MODE" in
    prepare) ;;
    all) run_unit; run_e2e 60 ;;
    unit) run_unit ;;
    e2e) run_e2e 60 ;;
    smoke) run_e2e 30 ;;
    bench) run_bench ;;
    *) say "unknown mode $MODE (all|prepare|unit|e2e|smoke|bench)"; exit 64 ;;
  esac
}

# One call, parsed whole before it runs: editing this file during a run cannot change the run.
main; exit
