#!/usr/bin/env bash
# `npm run test:package` (CI runs it; root on Debian amd64, after `npm ci`): builds both .debs
# and the signed apt repository (`npm run package`), two test versions of the amd64 one (the
# second with another site example and without one device profile, so it refuses a site the first
# accepts), a package of an older commit (OLD_COMMITS_BACK first-parent commits back in git
# history: its own code, built here, nothing committed), two other builds of this version (one
# file changed; one without the profile) and the 0.1.0 package (LEGACY_COMMIT's code and
# packaging, whose site and env files were conffiles); runs lintian on both
# release packages, checks the sizes, then test/package/lifecycle.ts (the upgrade from 0.1.0 over
# edited files, a fresh install with apt-get, the installed unit's command line as user fieldgate
# against the emulator with the commissioning page (password from `fieldgate web passwd`) and a
# share, profiles, the README's status/reload/logs, a refused (the old daemon traced: only its own
# release's files) and an accepted upgrade with
# `apt-get -y install </dev/null`, the outbox replayed, remove, purge, every daemon line JSON),
# an older commit's package from the signed repository over loopback HTTP, upgraded with
# `apt-get upgrade`; another build under an equal version (switched and restarted, or refused);
# a refused upgrade from 0.1.0's real code with the README's commands after it (test/package/releases.ts);
# then the arm64 package's own runtime and daemon under qemu-aarch64 (test/arm64/e2e.ts, a 30 s
# smoke) and its start-up time beside the amd64 package's, 3 runs each (the ratio of the medians).
# Also: pkg/ keeps the newest builds (--keep), and so does a repository's pool. Installs lintian, qemu-user, the arm64 libraries, socat, strace, mbpoll,
# openssl and python3 only when missing. Prints a summary; exit 0 only if every check passed.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
MAX_DEB_BYTES=$((45 * 1024 * 1024))
# Everything it runs beyond Node and dpkg, on its own (it runs before `npm test`, which installs the
# suite's peers): python3 for test/helpers/notify_listener.py, socat for the arm64 smoke's pty pair.
APT_PACKAGES="lintian qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross socat strace mbpoll openssl python3 dpkg-dev gnupg"
SYSROOT=/usr/aarch64-linux-gnu
# The last commit whose package shipped /etc/fieldgate/site.yaml and fieldgate.env as conffiles
# (0.1.0): built here with its own packaging (and this checkout's dist/) for the upgrade from it.
LEGACY_COMMIT=b2c7724e72b8ba5128e20590374a12c17d16ae62
# The device profile the second test version lacks (a site using it is refused by that version).
DROPPED_PROFILE=eastron-sdm120
# How far back (first-parent commits of HEAD) the "older commit" package is built from.
OLD_COMMITS_BACK="${FIELDGATE_OLD_COMMITS_BACK:-5}"

say() { printf 'test-package: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }
main() {
  [ "$(id -u)" = 0 ] || fail "dpkg -i needs root (CI runs as root)"
  if ! dpkg -s $APT_PACKAGES >/dev/null 2>&1; then
    say "installing $APT_PACKAGES"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $APT_PACKAGES >/dev/null
  fi

  work="$(mktemp -d "${TMPDIR:-/tmp}/fieldgate-test-package-XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  started=$(date +%s)
  # The release key of this run only (the fleet's own stays where package.sh keeps it).
  export FIELDGATE_RELEASE_KEY_DIR="$work/release-key"

  # 1. The packages; the test versions, the older commit's, other builds and 0.1.0 (gzip: test-only, faster).
  version="$(bash scripts/package.sh --print-version)"
  rm -rf pkg/apt
  # Older builds in pkg/ (named as dpkg orders them: +9 before +10): the build keeps the 5 newest per architecture.
  local planted=(0.1.0 0.1.0+1.gplanted 0.1.0+9.gplanted 0.1.0+10.gplanted 0.1.0+10.gplanted.dirty 0.1.0+11.gplanted)
  mkdir -p pkg
  for v in "${planted[@]}"; do : >"pkg/fieldgate_${v}_arm64.deb"; done
  FIELDGATE_KEEP_RELEASES=5 bash scripts/package.sh
  [ -f pkg/apt/InRelease ] && grep -q "^Version: $version\$" pkg/apt/Packages || fail "npm run package wrote no signed repository with $version in pkg/apt"
  local left
  left="$(find pkg -maxdepth 1 -name 'fieldgate_*_arm64.deb' -printf '%f\n' | LC_ALL=C sort | tr '\n' ' ')"
  [ "$(find pkg -maxdepth 1 -name 'fieldgate_*_arm64.deb' | wc -l)" -le 5 ] && [ -f "pkg/fieldgate_${version}_arm64.deb" ] \
    && [ ! -e pkg/fieldgate_0.1.0_arm64.deb ] && [ ! -e pkg/fieldgate_0.1.0+1.gplanted_arm64.deb ] && [ -e pkg/fieldgate_0.1.0+11.gplanted_arm64.deb ] \
    || fail "pkg/ after the build with 6 older arm64 builds in it: $left (want the 5 newest, $version among them)"
  find pkg -maxdepth 1 -name 'fieldgate_*gplanted*_arm64.deb' -delete
  say "pkg/ keeps the 5 newest builds per architecture: $left"
  deb_amd64="pkg/fieldgate_${version}_amd64.deb"
  deb_arm64="pkg/fieldgate_${version}_arm64.deb"
  rm -rf pkg/upgrade-test
  for v in fleet1 fleet2; do
    FIELDGATE_DEB_COMPRESSION=gzip bash scripts/package.sh --prebuilt --arch amd64 --version "$version+$v" --out pkg/upgrade-test
  done
  deb_v1="pkg/upgrade-test/fieldgate_${version}+fleet1_amd64.deb"
  deb_v2="pkg/upgrade-test/fieldgate_${version}+fleet2_amd64.deb"
  second_version "$deb_v2"
  old_rev="$(git rev-list --first-parent --skip="$OLD_COMMITS_BACK" -n 1 HEAD)"
  [ -n "$old_rev" ] || fail "no commit $OLD_COMMITS_BACK back in this checkout's history (CI clones it whole)"
  old_version="$(bash scripts/package.sh --print-version --commit "$old_rev")"
  FIELDGATE_DEB_COMPRESSION=gzip bash scripts/package.sh --arch amd64 --commit "$old_rev" --out pkg/upgrade-test
  deb_old="pkg/upgrade-test/fieldgate_${old_version}_amd64.deb"
  dpkg --compare-versions "$old_version" lt "$version" || fail "the older commit's $old_version does not sort before $version"
  say "older commit $(git rev-parse --short=9 "$old_rev"): $old_version < $version"
  versions_name_commits "$old_rev" "$old_version" "$version" "$deb_old"
  other_builds "$deb_amd64"
  legacy_package
  repository_keeps "$deb_old" "$deb_v1" "$deb_amd64"
  built=$(date +%s)

  # 2. Sizes, contents and lintian (both packages' lintian runs at once: one core each).
  for deb in "$deb_amd64" "$deb_arm64"; do
    { lintian --tag-display-limit 0 --show-overrides --fail-on none "$deb" 2>&1 && echo "lintian exit 0" || echo "lintian exit $?"; } >"$work/$(basename "$deb").lintian" &
  done
  for deb in "$deb_amd64" "$deb_arm64"; do
    bytes=$(stat -c %s "$deb")
    say "$(basename "$deb"): $bytes bytes ($((bytes / 1024 / 1024)) MiB), installed $(dpkg-deb -f "$deb" Installed-Size) KiB"
    [ "$bytes" -le "$MAX_DEB_BYTES" ] || fail "$deb is larger than 45 MiB"
    if dpkg-deb -c "$deb" | grep -E 'typescript|vitest|@fieldgate/|aedes|esbuild|/tsx/|/src/.*\.ts$' >/dev/null; then
      fail "$deb carries development packages: $(dpkg-deb -c "$deb" | grep -E 'typescript|vitest|@fieldgate/|aedes' | head -3)"
    fi
  done
  wait
  for deb in "$deb_amd64" "$deb_arm64"; do
    lintian_out="$(grep -E '^[A-Z]: ' "$work/$(basename "$deb").lintian" || true)"
    if printf '%s\n' "$lintian_out" | grep -E '^[EW]: ' >/dev/null || ! grep -qx 'lintian exit 0' "$work/$(basename "$deb").lintian"; then
      cat "$work/$(basename "$deb").lintian" >&2
      fail "lintian has errors or warnings on $deb"
    fi
    say "lintian $(basename "$deb"): no errors, no warnings; $(printf '%s\n' "$lintian_out" | grep -c '^O: ' || true) overridden (packaging/deb/lintian-overrides), $(printf '%s\n' "$lintian_out" | grep -c '^[IPX]: ' || true) info/pedantic/experimental"
  done

  # The packaged unit is the source unit with the package's paths: same flags, same hardening.
  changed="$(diff <(dpkg-deb --fsys-tarfile "$deb_amd64" | tar -xO ./usr/lib/systemd/system/fieldgate.service) systemd/fieldgate.service | grep -E '^[<>]' | grep -vE '^[<>] (ExecStart|ExecReload|WorkingDirectory|Documentation)=|^[<>] EnvironmentFile=[^-]|^[<>] # fieldgate edge gateway' || true)"
  [ -z "$changed" ] || fail "the packaged unit differs from systemd/fieldgate.service beyond its paths: $changed"
  say "packaged unit: systemd/fieldgate.service with /usr/lib/fieldgate paths"

  # 3. Install, run, upgrade, remove, purge on this machine.
  node --conditions=fieldgate-source --import tsx test/package/lifecycle.ts --legacy "$deb_legacy" \
    --deb "$deb_v1" --upgrade "$deb_v2" --upgrade-lacks-profile "$DROPPED_PROFILE" \
    --older-commit "$deb_old" --release "$deb_amd64" --other-build "$work/other/changed.deb" --other-build-refuses "$work/other/refuses.deb"
  lifecycle=$(date +%s)

  # 4. The arm64 package under qemu: its runtime, its daemon end to end, its start-up time.
  dpkg-deb -x "$deb_arm64" "$work/arm64"
  local tree="$work/arm64/usr/lib/fieldgate/package"
  [ -x "$tree/bin/node" ] && [ -f "$tree/app/bin/fieldgate.js" ] || fail "the arm64 package has no $tree/bin/node or app"
  printf '#!/bin/sh\nexec qemu-aarch64-static -L %s "%s" "$@"\n' "$SYSROOT" "$tree/bin/node" >"$work/node-arm64"
  chmod +x "$work/node-arm64"
  local runtime app_version
  runtime="$("$work/node-arm64" -p 'process.arch + " " + process.version')" || fail "the arm64 runtime does not run under qemu"
  app_version="$("$work/node-arm64" "$tree/app/bin/fieldgate.js" --version)" || fail "the arm64 fieldgate --version failed"
  say "arm64 runtime under qemu: $runtime, fieldgate $app_version"
  node --conditions=fieldgate-source --import tsx test/arm64/e2e.ts --node "$work/node-arm64" --app "$tree/app" --seconds 30
  # Start-up under qemu against the amd64 package's own in the same minutes: on a shared machine the
  # load decides the times, so the ratio is the figure that carries over (docs/install.md).
  dpkg-deb -x "$deb_amd64" "$work/amd64"
  local native="$work/amd64/usr/lib/fieldgate/package" amd64_ms arm64_ms
  say "load before start-up runs: $(cut -d' ' -f1-3 /proc/loadavg)"
  node --conditions=fieldgate-source --import tsx test/package/ready.ts --node "$native/bin/node" --app "$native/app" --runs 3 | tee "$work/ready-amd64"
  node --conditions=fieldgate-source --import tsx test/package/ready.ts --node "$work/node-arm64" --app "$tree/app" --runs 3 | tee "$work/ready-arm64"
  amd64_ms="$(sed -n 's/^start to READY.*: median \([0-9]*\) ms.*/\1/p' "$work/ready-amd64")"
  arm64_ms="$(sed -n 's/^start to READY.*: median \([0-9]*\) ms.*/\1/p' "$work/ready-arm64")"
  [ -n "$amd64_ms" ] && [ -n "$arm64_ms" ] || fail "no start-up median from test/package/ready.ts"
  say "start to READY, medians of 3: amd64 $amd64_ms ms, arm64 under qemu $arm64_ms ms ($(awk -v a="$arm64_ms" -v b="$amd64_ms" 'BEGIN { printf "%.1f", a / b }') x), load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  ended=$(date +%s)
  say "OK: build $((built - started)) s, lifecycle $((lifecycle - built)) s, arm64 $((ended - lifecycle)) s"
}

# The second test version as a later release may differ: another site example (no upgrade may ask
# about it), and one device profile gone (a site using it is refused: the refused-upgrade case).
second_version() {
  local deb="$1" root="$work/second-version"
  dpkg-deb -R "$deb" "$root"
  printf '# (this release'"'"'s example differs from the previous one)\n' >>"$root/usr/share/fieldgate/site.example.yaml"
  [ -f "$root/usr/lib/fieldgate/package/app/profiles/$DROPPED_PROFILE.yaml" ] || fail "no profile $DROPPED_PROFILE in the package to drop"
  rm "$root/usr/lib/fieldgate/package/app/profiles/$DROPPED_PROFILE.yaml"
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zgzip -z1 --build "$root" "$deb" >/dev/null
  rm -rf "$root"
}

# Each version names its commit (the short hash; RELEASE the whole one), and a tree with
# uncommitted changes says so (an untracked file for a moment makes this checkout one).
versions_name_commits() {
  local old_rev="$1" old_version="$2" version="$3" head_short probe dirty_version
  head_short="$(git rev-parse --short=9 HEAD)"
  case "$old_version" in *".g$(git rev-parse --short=9 "$old_rev")") ;; *) fail "the older commit's version $old_version does not end with its hash" ;; esac
  case "$version" in *".g$head_short"|*".g$head_short.dirty") ;; *) fail "the release's version $version does not name HEAD ($head_short)" ;; esac
  dpkg-deb --fsys-tarfile "$4" | tar -xO ./usr/lib/fieldgate/package/RELEASE | grep -qx "commit=$(git rev-parse "$old_rev")" || fail "the older commit's RELEASE names another commit"
  probe="$REPO/.test-package-dirty-probe-$$"
  : >"$probe"
  dirty_version="$(bash scripts/package.sh --print-version)" || { rm -f "$probe"; fail "--print-version failed"; }
  rm -f "$probe"
  [ "$dirty_version" = "${version%.dirty}.dirty" ] || fail "with an uncommitted file the version is $dirty_version, not ${version%.dirty}.dirty"
  say "versions name their commits: $old_version, $version (RELEASE: $(git rev-parse --short=12 "$old_rev")...); uncommitted changes: $dirty_version"
}

# The repository's pool keeps the newest FIELDGATE_KEEP_RELEASES versions: three added (the oldest
# last) with 2 kept leave the two newest, in the pool and in the signed index alike.
repository_keeps() {
  local repo="$work/keep-repo" kept listed
  FIELDGATE_KEEP_RELEASES=2 bash scripts/apt-repo.sh "$repo" "$2" "$3" "$1"
  kept="$(find "$repo/pool" -name '*.deb' -printf '%f\n' | LC_ALL=C sort | tr '\n' ' ')"
  listed="$(sed -n 's/^Version: //p' "$repo/Packages" | LC_ALL=C sort | tr '\n' ' ')"
  [ "$kept" = "$(printf '%s\n' "$(basename "$2")" "$(basename "$3")" | LC_ALL=C sort | tr '\n' ' ')" ] \
    && [ "$listed" = "$(printf '%s\n' "$(debv "$2")" "$(debv "$3")" | LC_ALL=C sort | tr '\n' ' ')" ] \
    || fail "a repository keeping 2 of 3 versions holds: pool $kept, Packages $listed"
  say "repository keeps the 2 newest of 3 (FIELDGATE_KEEP_RELEASES=2): $listed"
  rm -rf "$repo"
}
debv() { dpkg-deb -f "$1" Version; }

# Two other builds under the release's own version: one file of the app changed, and one without
# the dropped profile (it refuses the site that uses it).
other_builds() {
  local deb="$1" root="$work/other/root"
  mkdir -p "$work/other"
  dpkg-deb -R "$deb" "$root"
  printf '\n// another build of the same version\n' >>"$root/usr/lib/fieldgate/package/app/bin/fieldgate.js"
  repack "$root" "$work/other/changed.deb"
  rm "$root/usr/lib/fieldgate/package/app/profiles/$DROPPED_PROFILE.yaml"
  repack "$root" "$work/other/refuses.deb"
  rm -rf "$root"
}
repack() {
  (cd "$1" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$1/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zgzip -z1 --build "$1" "$2" >/dev/null
}

# 0.1.0 as it was packaged (site.yaml and fieldgate.env conffiles, code in /usr/lib/fieldgate/{bin,app}),
# with its own code: its dist/ built here from its sources.
legacy_package() {
  local tree="$work/legacy-src"
  mkdir -p "$tree" "$work/legacy"
  git -C "$REPO" archive "$LEGACY_COMMIT" | tar -x -C "$tree" || fail "commit $LEGACY_COMMIT (the 0.1.0 packaging) is not in this checkout's history"
  ln -s "$REPO/node_modules" "$tree/node_modules"
  (cd "$tree" && "$REPO/node_modules/.bin/tsc" -p tsconfig.json)
  # This checkout's production dependencies, marked as built for that tree's lockfile.
  mkdir -p "$tree/pkg/build"
  cp -al "$REPO/pkg/build/deps-amd64" "$tree/pkg/build/deps-amd64"
  rm -f "$tree/pkg/build/deps-amd64/.fieldgate-lock"
  (cd "$tree" && cat package-lock.json package.json | sha256sum | cut -d' ' -f1) >"$tree/pkg/build/deps-amd64/.fieldgate-lock"
  FIELDGATE_DEB_COMPRESSION=gzip bash "$tree/scripts/package.sh" --prebuilt --arch amd64 --out "$work/legacy"
  rm -rf "$tree"
  deb_legacy="$(echo "$work"/legacy/fieldgate_*_amd64.deb)"
  [ -f "$deb_legacy" ] || fail "no 0.1.0 package built from $LEGACY_COMMIT"
}

# One call, parsed whole before it runs: editing this file during a run cannot change the run.
main; exit
