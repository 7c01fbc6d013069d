#!/usr/bin/env bash
# A newcomer's first run on a fresh machine: a Debian bookworm chroot (debootstrap, minbase) with
# nothing but git, Node and npm (the runtime fieldgate ships, scripts/node-runtime.sh), a
# `git clone` of this checkout's HEAD, then the README's commands as root: `npm ci`, `npm test`.
# The suite installs its Debian peers itself (test/helpers/peers-setup.ts), so nothing else is
# prepared. Not part of CI (it downloads a Debian base system and the peers: about 10 minutes
# before the suite starts). Root on Debian amd64. Prints a transcript with the wall time of
# each step; exit status is npm test's.
#
#   sudo bash scripts/test-fresh-machine.sh [ROOT_DIR [TEST_FILE...]]
#   ROOT_DIR: default /srv/fieldgate-fresh-bookworm (kept: a second run skips debootstrap);
#   TEST_FILE: only these files (`npm test -- FILE...`), else the whole suite.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="${1:-/srv/fieldgate-fresh-bookworm}"
shift || true
TEST_FILES="$*"
MIRROR="${FIELDGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

say() { printf 'fresh-machine: %s\n' "$*"; }
[ "$(id -u)" = 0 ] || { say "needs root (debootstrap, chroot, mounts)"; exit 1; }
command -v debootstrap >/dev/null || { say "installing debootstrap"; apt-get install -y -qq debootstrap >/dev/null; }

step_started=0
step() { step_started=$(date +%s); say "$*"; }
took() { say "  took $(( $(date +%s) - step_started )) s"; }

mounted=()
cleanup() {
  local i
  for (( i=${#mounted[@]}-1; i>=0; i-- )); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() { mkdir -p "$ROOT$2"; mount "${@:3}" "$1" "$ROOT$2"; mounted+=("$ROOT$2"); }

if [ ! -x "$ROOT/usr/bin/git" ]; then
  step "debootstrap bookworm (minbase, git, ca-certificates) into $ROOT"
  debootstrap --variant=minbase --include=git,ca-certificates,xz-utils bookworm "$ROOT" "$MIRROR" >/dev/null
  took
fi

step "Node and npm: the shipped runtime"
. "$REPO/scripts/node-runtime.sh"
node_dir="$(fieldgate_node_dir x64)"
npm_dir="$(dirname "$(readlink -f "$(command -v npm)")")/.."
mkdir -p "$ROOT/usr/local/bin" "$ROOT/usr/local/lib/node_modules"
cp "$node_dir/bin/node" "$ROOT/usr/local/bin/node"
rm -rf "$ROOT/usr/local/lib/node_modules/npm"
cp -a "$(readlink -f "$npm_dir")" "$ROOT/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# debootstrap writes no /etc/hosts; every booted machine has one naming localhost.
[ -e "$ROOT/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$ROOT/etc/hosts"
# The machine's own certificate authorities (a network that inspects TLS has one of its own):
# what any new machine here starts with, so npm reaches its registry from the chroot too.
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  chroot "$ROOT" update-ca-certificates >/dev/null 2>&1
fi
took

bind proc /proc -t proc
bind sysfs /sys -t sysfs
bind /dev /dev --rbind
mount --make-rslave "$ROOT/dev"  # so unmounting here never reaches the host's /dev/pts
bind tmpfs /tmp -t tmpfs
bind tmpfs /dev/shm -t tmpfs

step "git clone of $(git -C "$REPO" rev-parse --short HEAD)"
rm -rf "$ROOT/root/fieldgate"
git clone -q "$REPO" "$ROOT/root/fieldgate"
took

run() { chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin CI="${CI:-}" NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt bash -lc "cd /root/fieldgate && $1"; }
say "in the chroot: $(run 'node --version; npm --version; git --version' | tr '\n' ' ')"
say "in the chroot, absent: $(run 'for p in socat mosquitto mbpoll faketime chromium python3; do command -v $p >/dev/null || printf "%s " $p; done')"

step "npm ci"
run 'npm ci --no-audit --no-fund' | tail -3
took

step "npm test${TEST_FILES:+ -- $TEST_FILES}"
set +e
run "npm test${TEST_FILES:+ -- $TEST_FILES}" 2>&1 | tee "$ROOT/root/npm-test.log" | grep -E '^installing the missing|^vitest: |^ (❯|×) |leftover|skipped [0-9]'
status=${PIPESTATUS[0]}
set -e
took
say "npm test exit $status (log: $ROOT/root/npm-test.log)"
exit "$status"
