#!/usr/bin/env bash
# `npm run package`: pkg/fieldgate_<version>_amd64.deb and _arm64.deb, each with its own Node
# runtime (scripts/node-runtime.sh), the built daemon and its production dependencies for that
# architecture only (docs/install.md), and the signed apt repository pkg/apt (scripts/apt-repo.sh).
# Needs the dev install (`npm ci`), npm's registry, dpkg-deb, dpkg-scanpackages and gpg; nothing
# else. Reproducible: fixed mtimes (SOURCE_DATE_EPOCH, default the last commit's time),
# root-owned entries, dpkg-deb's sorted tar.
#   scripts/package.sh [--arch amd64|arm64|all] [--layout bundle|tree] [--version V] [--out DIR] [--prebuilt] [--commit REV] [--no-repo] [--keep N|all] [--print-version]
# The version comes from the source: package.json's version, the commit count and the short hash
# (0.1.0+812.g6b0928b00), so every commit builds its own version, in commit order under dpkg's
# rules; ".dirty" when the tree has uncommitted changes. The built code reports it (--version,
# status, metrics, the page, the cloud attributes). --version builds a package of another version
# (test builds): it must sort after the source's. --prebuilt: dist/ is already built. --commit
# REV: the app of an older commit (its sources from git, built here; this checkout's packaging),
# versioned by that commit: the upgrade test's real old code. --no-repo: no pkg/apt.
# --print-version: prints the version it would build, builds nothing. --keep N (default
# FIELDGATE_KEEP_RELEASES, 5): the release build keeps the N newest versions of each architecture
# in pkg/ and in pkg/apt's pool and removes older ones ("all" keeps every one; scripts/keep-releases.sh).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=node-runtime.sh
. "$REPO/scripts/node-runtime.sh"
# shellcheck source=keep-releases.sh
. "$REPO/scripts/keep-releases.sh"

ARCHES="amd64 arm64"
LAYOUT=bundle
OUT="$REPO/pkg"
PREBUILT=0
COMMIT=""
REPO_OUT=1
PRINT_VERSION=0
VERSION=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) ARCHES="$2"; [ "$2" = all ] && ARCHES="amd64 arm64"; shift 2 ;;
    --layout) LAYOUT="$2"; shift 2 ;;
    --version) VERSION="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --prebuilt) PREBUILT=1; shift ;;
    --commit) COMMIT="$2"; shift 2 ;;
    --no-repo) REPO_OUT=0; shift ;;
    --print-version) PRINT_VERSION=1; shift ;;
    --keep) FIELDGATE_KEEP_RELEASES="$2"; shift 2 ;;
    *) echo "package: unknown option $1" >&2; exit 64 ;;
  esac
done
case "$LAYOUT" in bundle|tree) ;; *) echo "package: --layout bundle or tree" >&2; exit 64 ;; esac
check_keep_releases "$FIELDGATE_KEEP_RELEASES"
export FIELDGATE_KEEP_RELEASES
BUILD="$REPO/pkg/build"
DEB="$REPO/packaging/deb"
# SRC: the app's sources (this checkout, or --commit's tree); REPO: the packaging.
SRC="$REPO"
if [ -n "$COMMIT" ]; then
  COMMIT="$(git -C "$REPO" rev-parse --verify "$COMMIT^{commit}")" || { echo "package: --commit: no such commit" >&2; exit 64; }
  SRC="$BUILD/src-$COMMIT"
fi
if [ -n "$COMMIT" ]; then
  BASE_VERSION="$(git -C "$REPO" show "$COMMIT:package.json" | node -e 'let t="";process.stdin.on("data",(d)=>t+=d).on("end",()=>process.stdout.write(JSON.parse(t).version))')"
else
  BASE_VERSION="$(node -p 'require(process.argv[1]).version' "$REPO/package.json")"
fi
# BASE+COUNT.gHASH: the count orders commits (dpkg compares digit runs as numbers), the hash names
# the commit; a tree with uncommitted changes (tracked or new files) adds ".dirty".
source_version() {
  local rev="${COMMIT:-HEAD}" count hash dirty=""
  if ! count="$(git -C "$REPO" rev-list --count "$rev" 2>/dev/null)"; then echo "$BASE_VERSION+0.nogit"; return; fi
  hash="$(git -C "$REPO" rev-parse --short=9 "$rev")"
  if [ -z "$COMMIT" ] && [ -n "$(git -C "$REPO" status --porcelain --untracked-files=normal 2>/dev/null)" ]; then dirty=".dirty"; fi
  echo "$BASE_VERSION+$count.g$hash$dirty"
}
SOURCE_VERSION="$(source_version)"
if [ -z "$VERSION" ]; then VERSION="$SOURCE_VERSION"
elif ! dpkg --compare-versions "$VERSION" gt "$SOURCE_VERSION"; then
  echo "package: --version $VERSION does not sort after the source's $SOURCE_VERSION" >&2
  exit 64
fi
if [ "$PRINT_VERSION" = 1 ]; then echo "$VERSION"; exit 0; fi
SOURCE_COMMIT="$(git -C "$REPO" rev-parse "${COMMIT:-HEAD}" 2>/dev/null || echo unknown)"
case "$SOURCE_VERSION" in *.dirty) SOURCE_COMMIT="$SOURCE_COMMIT (with uncommitted changes)" ;; esac
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct "${COMMIT:-HEAD}" 2>/dev/null || echo 0)}"
export SOURCE_DATE_EPOCH

say() { printf 'package: %s\n' "$*" >&2; }
node_arch() { case "$1" in amd64) echo x64 ;; arm64) echo arm64 ;; *) say "unknown architecture $1 (amd64, arm64)"; exit 64 ;; esac; }

# The code's own version must be package.json's (src/core/version.ts): the build replaces it.
if [ -n "$COMMIT" ]; then version_ts="$(git -C "$REPO" show "$COMMIT:src/core/version.ts")"; else version_ts="$(cat "$REPO/src/core/version.ts")"; fi
code_version="$(printf '%s\n' "$version_ts" | sed -n "s/^export const FIELDGATE_VERSION = '\(.*\)';$/\1/p")"
if [ "$code_version" != "$BASE_VERSION" ]; then
  say "src/core/version.ts says '$code_version', package.json '$BASE_VERSION'"
  exit 1
fi

# Production node_modules for one architecture, as Dockerfile.arm64 installs them: npm picks the
# platform packages from the lockfile; install scripts are skipped (they would run on this
# machine's node; none of the runtime packages needs one). Kept while the lockfile is unchanged.
# --commit with another lockfile: its own directory (this checkout's stays as it is).
deps_dir() {
  local own other
  own="$(cat "$REPO/package-lock.json" "$REPO/package.json" | sha256sum | cut -d' ' -f1)"
  other="$(cat "$SRC/package-lock.json" "$SRC/package.json" | sha256sum | cut -d' ' -f1)"
  if [ "$own" = "$other" ]; then echo "$BUILD/deps-$1"; else echo "$BUILD/deps-$1-${other:0:12}"; fi
}
stage_deps() {
  local arch="$1" dir lock_sum
  dir="$(deps_dir "$arch")"
  lock_sum="$(cat "$SRC/package-lock.json" "$SRC/package.json" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$dir/.fieldgate-lock" 2>/dev/null)" = "$lock_sum" ]; then return; fi
  say "npm ci --omit=dev for linux/$arch/glibc in $dir"
  rm -rf "$dir" && mkdir -p "$dir/packages"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$dir/"
  [ -f "$SRC/.npmrc" ] && cp "$SRC/.npmrc" "$dir/"
  for p in "$SRC"/packages/*/; do mkdir -p "$dir/packages/$(basename "$p")" && cp "$p/package.json" "$dir/packages/$(basename "$p")/"; done
  (cd "$dir" && npm ci --omit=dev --workspaces=false --cpu="$(node_arch "$arch")" --os=linux --libc=glibc --ignore-scripts --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$dir/.fieldgate-lock"
}

# The app: bin/fieldgate.js and the node_modules it needs. bundle: one esbuild file per entry
# (dist/ and the pure-JS packages inside), node_modules holding only the packages with native
# code and what they load; tree: dist/ as tsc built it and all production packages.
stage_app() {
  local arch="$1" app="$2" deps
  deps="$(deps_dir "$arch")"
  mkdir -p "$app/bin"
  node -e 'const p=require(process.argv[1]);process.stdout.write(JSON.stringify({name:p.name,version:process.argv[2],private:true,type:p.type,license:p.license},null,2)+"\n")' "$SRC/package.json" "$VERSION" >"$app/package.json"
  if [ "$LAYOUT" = bundle ]; then
    # Commands stay lazily loaded (--splitting: a chunk per dynamic import), so the dev commands
    # still say that their packages are missing instead of failing every command at load. The
    # CommonJS packages inside call require(): the banner gives each ES module one. Entry and
    # chunks all sit in dist/bundle/, two levels below the app like dist/<dir>/*.js, so a path a
    # module finds from its own URL (`new URL('../../profiles/', import.meta.url)`) is the same.
    # Worker threads (dist/**/*-worker.js, started by URL beside their module) are entries too.
    local workers
    mapfile -t workers < <(cd "$SRC" && find dist -name '*-worker.js' | LC_ALL=C sort)
    "$REPO/node_modules/.bin/esbuild" "$SRC/bin/fieldgate.js" "${workers[@]/#/$SRC/}" --bundle --splitting --platform=node --format=esm --target=node24 \
      --outdir="$app/dist/bundle" --entry-names='[name]' --chunk-names='[name]-[hash]' --legal-comments=none --log-level=warning \
      --external:libsql --external:serialport --external:koffi --external:@fieldgate/emulator --external:@fieldgate/simulator \
      '--banner:js=import { createRequire as fieldgateCreateRequire } from "node:module"; const require = fieldgateCreateRequire(import.meta.url);'
    sed -i '1{/^#!/d}' "$app/dist/bundle/fieldgate.js"
    printf '%s\n' '// The fieldgate command: the bundled CLI (dist/bundle, built by scripts/package.sh).' "await import('../dist/bundle/fieldgate.js');" >"$app/bin/fieldgate.js"
    node "$REPO/scripts/package-closure.mjs" "$deps/node_modules" libsql serialport koffi | while IFS= read -r name; do
      mkdir -p "$app/node_modules/$(dirname "$name")"
      cp -a "$deps/node_modules/$name" "$app/node_modules/$name"
    done
  else
    cp -a "$SRC/bin/fieldgate.js" "$app/bin/"
    (cd "$SRC" && find dist -name '*.js' -print0 | tar cf - --null -T -) | tar xf - -C "$app"
    cp -a "$deps/node_modules" "$app/node_modules"
  fi
  # Run by the runtime's full path, never as a script: no #! line (lintian would ask for nodejs).
  sed -i '1{/^#!/d}' "$app/bin/fieldgate.js"
  find "$app/bin" "$app/dist" -name '*.js' -exec chmod 0644 {} +
  set_code_version "$app"
  prune_node_modules "$app/node_modules" "$(node_arch "$arch")"
  if [ -d "$SRC/profiles" ]; then cp -a "$SRC/profiles" "$app/profiles"; fi
}

# The built code reports the package's version (exactly one definition is replaced).
set_code_version() {
  local files
  files="$(grep -rlF "FIELDGATE_VERSION = \"$BASE_VERSION\"" "$1/bin" "$1/dist" 2>/dev/null; grep -rlF "FIELDGATE_VERSION = '$BASE_VERSION'" "$1/bin" "$1/dist" 2>/dev/null || true)"
  [ "$(printf '%s\n' "$files" | grep -c .)" = 1 ] || { say "cannot find the one FIELDGATE_VERSION definition in the built code"; exit 1; }
  sed -i "s/FIELDGATE_VERSION = \([\"']\)$BASE_VERSION\1/FIELDGATE_VERSION = \1$VERSION\1/" "$files"
}

# Docs, types, sources, maps and every other platform's binaries out; then every ELF file left
# must be for this architecture, or the build fails.
prune_node_modules() {
  local nm="$1" arch="$2"
  [ -d "$nm" ] || return 0
  find "$nm" -depth \( -name '*.md' -o -name '*.markdown' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
    -o -name '*.ts' -o -name '.github' -o -name 'CHANGELOG*' -o -name '.npmignore' -o -name '.eslintrc*' -o -name '.travis.yml' \
    -o -name 'binding.gyp' -o -name '*.cc' -o -name '*.h' -o -name '*.hh' -o -name '*.inc' -o -name '*.def' -o -name '*.S' -o -name '*.asm' \) -exec rm -rf {} +
  find "$nm" \( -path '*/@libsql/*-musl' -o -path '*/@koromix/koffi-linux-*/musl_*' \) -prune -exec rm -rf {} +
  # Build-time parts: headers for compiling addons, koffi's sources and build tool, node-gyp-build's CLIs.
  rm -rf "$nm/node-addon-api" "$nm/koffi/vendor" "$nm/koffi/doc" "$nm/koffi/cnoke.cjs" "$nm/koffi/src/koffi/CMakeLists.txt" \
    "$nm/koffi/src/koffi/src/trampolines.cjs" \
    "$nm/node-gyp-build/bin.js" "$nm/node-gyp-build/build-test.js" "$nm/node-gyp-build/optional.js"
  if [ -d "$nm/@serialport/bindings-cpp/prebuilds" ]; then
    find "$nm/@serialport/bindings-cpp/prebuilds" -mindepth 1 -maxdepth 1 ! -name "linux-$arch" -exec rm -rf {} +
    find "$nm/@serialport/bindings-cpp/prebuilds" -name '*musl*' -exec rm -rf {} +
    rm -rf "$nm/@serialport/bindings-cpp/src"
  fi
  local want bad=""
  case "$arch" in x64) want='x86-64' ;; arm64) want='aarch64' ;; esac
  while IFS= read -r -d '' f; do
    if head -c 4 "$f" | grep -q $'^\x7fELF'; then
      file -b "$f" | grep -q "$want" || bad="$bad $f"
    fi
  done < <(find "$nm" -type f \( -name '*.node' -o -name '*.so*' \) -print0)
  [ -z "$bad" ] || { say "binaries of another architecture in the $arch package:$bad"; exit 1; }
}

# Everything under the package root, owned by root (dpkg-deb --root-owner-group), at fixed
# mtimes and modes: 0755 for directories and executables, 0644 for the rest.
build_deb() {
  local arch="$1" root="$BUILD/root-$1"
  rm -rf "$root" && mkdir -p "$root/DEBIAN"
  # The package's tree (runtime and app): postinst makes it /usr/lib/fieldgate/releases/<version>
  # and points /usr/lib/fieldgate/current at it once the site file in use validates (docs/install.md).
  local lib="$root/usr/lib/fieldgate" tree="$root/usr/lib/fieldgate/package"
  mkdir -p "$tree/bin"
  local runtime
  runtime="$(fieldgate_node_dir "$(node_arch "$arch")")"
  cp "$runtime/bin/node" "$tree/bin/node"
  stage_app "$arch" "$tree/app"
  release_file "$tree/app" >"$tree/RELEASE"
  install -m 0644 "$REPO/systemd/service.env" "$lib/service.env"
  install -D -m 0755 "$DEB/fieldgate.sh" "$root/usr/bin/fieldgate"
  install -d "$root/usr/lib/systemd/system"
  # The source unit with the package's paths: same flags, same hardening (test:package diffs them).
  sed -e 's#/usr/bin/node #/usr/lib/fieldgate/current/bin/node #g' -e 's#/opt/fieldgate/bin/fieldgate\.js#/usr/lib/fieldgate/current/app/bin/fieldgate.js#g' \
    -e 's#^WorkingDirectory=/opt/fieldgate$#WorkingDirectory=/usr/lib/fieldgate/current/app#' \
    -e 's#^EnvironmentFile=/opt/fieldgate/systemd/service\.env$#EnvironmentFile=/usr/lib/fieldgate/service.env#' \
    -e 's#^Documentation=.*#Documentation=file:///usr/share/doc/fieldgate/README.md#' \
    -e 's#^\# fieldgate edge gateway\. Install:.*#\# fieldgate edge gateway, installed by the fieldgate package (README "Install as a service").#' \
    "$REPO/systemd/fieldgate.service" >"$root/usr/lib/systemd/system/fieldgate.service"
  # Examples, not conffiles: postinst copies them to /etc/fieldgate only where a file is missing.
  install -D -m 0644 "$REPO/config/site.example.yaml" "$root/usr/share/fieldgate/site.example.yaml"
  install -m 0644 "$REPO/systemd/fieldgate.env.example" "$root/usr/share/fieldgate/fieldgate.env.example"
  local doc="$root/usr/share/doc/fieldgate"
  install -D -m 0644 "$REPO/README.md" "$doc/README.md"
  install -m 0644 "$REPO/docs/install.md" "$doc/install.md"
  install -m 0644 "$DEB/copyright" "$doc/copyright"
  install -m 0644 "$runtime/LICENSE" "$doc/node-licenses.txt"
  printf 'fieldgate (%s) unstable; urgency=medium\n\n  * Release %s (the project'"'"'s changes: its git history).\n\n -- %s  %s\n' \
    "$VERSION" "$VERSION" "$(maintainer)" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")" | gzip -9n >"$doc/changelog.gz"
  install -D -m 0644 "$DEB/lintian-overrides" "$root/usr/share/lintian/overrides/fieldgate"
  for script in preinst postinst prerm postrm; do
    sed "s/@VERSION@/$VERSION/g" "$DEB/$script" >"$root/DEBIAN/$script"
    chmod 0755 "$root/DEBIAN/$script"
  done
  normalise "$root"
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
  local installed_kb
  installed_kb="$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)"
  sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$installed_kb/" \
    "$DEB/control" >"$root/DEBIAN/control"
  chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
  find "$root" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"
  local out="$OUT/fieldgate_${VERSION}_${arch}.deb"
  # xz: the smallest .deb. FIELDGATE_DEB_COMPRESSION=gzip is for test builds only (test:package's
  # upgrade build), where a minute of xz buys nothing.
  local compression=(-Zxz -z6 --threads-max=1)
  [ "${FIELDGATE_DEB_COMPRESSION:-xz}" = gzip ] && compression=(-Zgzip -z1)
  dpkg-deb --root-owner-group "${compression[@]}" --build "$root" "$out" >/dev/null
  say "$(basename "$out"): $(stat -c %s "$out") bytes, installed $installed_kb KiB ($LAYOUT layout)"
}

# What /usr/bin/fieldgate and an admin read of a tree: its version and commit, and what the command
# of that tree does itself (env-files: it reads FIELDGATE_ENV_FILES; a tree without the line, an
# older one, gets the environment files' variables from the wrapper).
release_file() {
  printf 'version=%s\ncommit=%s\n' "$VERSION" "$SOURCE_COMMIT"
  if grep -rqF FIELDGATE_ENV_FILES "$1/dist"; then echo 'env-files=yes'; fi
}

maintainer() { sed -n 's/^Maintainer: //p' "$DEB/control"; }

normalise() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -perm /111 ! -path '*/DEBIAN/*' -exec chmod 0755 {} +
  find "$1" -type f \( ! -perm /111 -o -name '*.node' -o -name '*.so' -o -name '*.so.*' \) -exec chmod 0644 {} +
  find "$1" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"
}

main() {
  umask 022
  mkdir -p "$OUT" "$BUILD"
  if [ -n "$COMMIT" ]; then
    say "building $COMMIT's dist/ (tsc) in $SRC"
    rm -rf "$SRC" && mkdir -p "$SRC"
    git -C "$REPO" archive "$COMMIT" | tar -x -C "$SRC"
    ln -s "$REPO/node_modules" "$SRC/node_modules"
    (cd "$SRC" && "$REPO/node_modules/.bin/tsc" -p tsconfig.json)
  elif [ "$PREBUILT" = 0 ]; then
    say "building dist/ (tsc)"
    (cd "$REPO" && node_modules/.bin/tsc -p tsconfig.json)
  fi
  say "version $VERSION"
  for arch in $ARCHES; do stage_deps "$arch"; done
  # One architecture per core: xz of the Node binary is most of the time, and single-threaded
  # (for the same bytes every time).
  local pids=() failed=0
  for arch in $ARCHES; do
    build_deb "$arch" &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  [ "$failed" = 0 ] || { say "a package build failed"; exit 1; }
  # (its lockfile names the dependencies to keep: before its sources go)
  [ -z "$COMMIT" ] || { drop_other_deps; rm -rf "$SRC"; }
  # The fleet's apt repository: only for the release build (pkg/, this version), not test builds.
  if [ "$REPO_OUT" = 1 ] && [ "$OUT" = "$REPO/pkg" ] && [ -z "$COMMIT" ]; then
    local debs=()
    for arch in $ARCHES; do debs+=("$OUT/fieldgate_${VERSION}_${arch}.deb"); done
    bash "$REPO/scripts/apt-repo.sh" "$OUT/apt" "${debs[@]}"
  fi
  # The release build's older packages beyond the kept count go (test builds' own --out stays as it is).
  if [ "$OUT" = "$REPO/pkg" ] && [ -z "$COMMIT" ]; then
    local removed
    removed="$(keep_newest_debs "$OUT" "$FIELDGATE_KEEP_RELEASES" | wc -l)"
    [ "$removed" = 0 ] || say "removed $removed older package(s) from $OUT, kept the $FIELDGATE_KEEP_RELEASES newest per architecture (--keep)"
  fi
}

# An older commit's production dependencies for another lockfile (deps-<arch>-<sum>) are kept for
# the lockfile just built only: one such directory per architecture at most, not one per lockfile
# ever built.
drop_other_deps() {
  local arch keep d
  for arch in $ARCHES; do
    keep="$(deps_dir "$arch")"
    for d in "$BUILD/deps-$arch"-*; do
      [ -d "$d" ] && [ "$d" != "$keep" ] && rm -rf "$d"
    done
  done
  return 0
}

main; exit
