# Sourced, not run: the Node runtime fieldgate ships, pinned like a lockfile entry (exact version
# and the npm registry's integrity of the official binary package), and fetched with npm alone.
# Used by scripts/package.sh (the .deb runtimes), test/arm64/run.sh (arm64 under qemu) and
# .ci/run (the test suite on the shipped runtime). Dockerfile.arm64's image uses the same version.
FIELDGATE_NODE_VERSION=24.21.0
FIELDGATE_NODE_INTEGRITY_X64='sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=='
FIELDGATE_NODE_INTEGRITY_ARM64='sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g=='
# Downloaded runtimes live outside the checkout, kept between runs (CI clones afresh each time).
FIELDGATE_NODE_CACHE="${FIELDGATE_NODE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/fieldgate-node}"

# fieldgate_node_dir ARCH (x64|arm64): prints the directory of the checked runtime, fetching it
# once: `npm pack node-linux-ARCH@VERSION`, its sha512 compared with the pinned integrity before
# anything is unpacked. Fails (non-zero, a message on stderr) on a mismatch or a failed fetch.
fieldgate_node_dir() {
  local arch="$1" integrity
  case "$arch" in
    x64) integrity="$FIELDGATE_NODE_INTEGRITY_X64" ;;
    arm64) integrity="$FIELDGATE_NODE_INTEGRITY_ARM64" ;;
    *) echo "node-runtime: no pinned Node for architecture '$arch' (x64, arm64)" >&2; return 64 ;;
  esac
  local dir="$FIELDGATE_NODE_CACHE/node-linux-$arch-$FIELDGATE_NODE_VERSION"
  if [ -x "$dir/bin/node" ]; then
    echo "$dir"
    return 0
  fi
  mkdir -p "$FIELDGATE_NODE_CACHE"
  local tmp
  tmp="$(mktemp -d "$FIELDGATE_NODE_CACHE/fetch.XXXXXX")"
  echo "node-runtime: fetching node-linux-$arch@$FIELDGATE_NODE_VERSION from the npm registry" >&2
  if ! (cd "$tmp" && npm pack "node-linux-$arch@$FIELDGATE_NODE_VERSION" --silent >/dev/null); then
    echo "node-runtime: npm pack node-linux-$arch@$FIELDGATE_NODE_VERSION failed" >&2
    rm -rf "$tmp"
    return 1
  fi
  local tarball="$tmp/node-linux-$arch-$FIELDGATE_NODE_VERSION.tgz" actual
  actual="$(node -e 'const c=require("crypto"),fs=require("fs");console.log("sha512-"+c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' "$tarball")"
  if [ "$actual" != "$integrity" ]; then
    echo "node-runtime: integrity mismatch for node-linux-$arch@$FIELDGATE_NODE_VERSION: got $actual, pinned $integrity" >&2
    rm -rf "$tmp"
    return 1
  fi
  tar xzf "$tarball" -C "$tmp"
  rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp"
  echo "$dir"
}
