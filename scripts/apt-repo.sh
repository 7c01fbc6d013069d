#!/usr/bin/env bash
# The fleet's apt repository (docs/install.md "A fleet's apt repository"): a flat repository any
# static web server can serve. Adds the given .debs to DIR/pool (the versions already there stay,
# the newest FIELDGATE_KEEP_RELEASES of each architecture, default 5, "all" for every one: a box
# can still install or go back to them), then writes DIR/Packages(.gz), DIR/Release and
# signs it: DIR/InRelease (clear-signed) and DIR/Release.gpg, with the release key, and the
# key's public half as DIR/fieldgate-archive-keyring.gpg (what a box puts in /etc/apt/keyrings).
#   scripts/apt-repo.sh DIR [DEB...]
# The key is made once (gpg, ed25519, no passphrase) and kept outside git, in
# FIELDGATE_RELEASE_KEY_DIR (default ~/.config/fieldgate-release, mode 0700): the same key signs
# every later build, so boxes trust new releases without a change. Needs dpkg-scanpackages
# (dpkg-dev) and gpg.
set -euo pipefail
# shellcheck source=keep-releases.sh
. "$(dirname "$0")/keep-releases.sh"
check_keep_releases "$FIELDGATE_KEEP_RELEASES"
[ $# -ge 1 ] || { echo "usage: apt-repo.sh DIR [DEB...]" >&2; exit 64; }
DIR="$1"
shift
KEY_DIR="${FIELDGATE_RELEASE_KEY_DIR:-$HOME/.config/fieldgate-release}"
KEY_NAME="fieldgate release signing key"
say() { printf 'apt-repo: %s\n' "$*" >&2; }
for tool in dpkg-scanpackages gpg; do
  command -v "$tool" >/dev/null || { say "$tool is missing (apt-get install dpkg-dev gnupg)"; exit 69; }
done

gpg_key() { gpg --homedir "$KEY_DIR" --batch --quiet "$@"; }

# One key, made by the first build that needs it; a lock so that two builds never make two.
ensure_key() {
  mkdir -p "$KEY_DIR" && chmod 0700 "$KEY_DIR"
  exec 9>"$KEY_DIR/.lock"
  flock 9
  if ! gpg_key --list-secret-keys "$KEY_NAME" >/dev/null 2>&1; then
    say "making the release key in $KEY_DIR (once; keep this directory: it signs every later release)"
    gpg_key --passphrase '' --quick-generate-key "$KEY_NAME" ed25519 sign never
  fi
  flock -u 9
}

release_file() {
  local archs
  archs="$(find pool -name '*.deb' -printf '%f\n' | sed -n 's/^.*_\([a-z0-9]*\)\.deb$/\1/p' | LC_ALL=C sort -u | tr '\n' ' ')"
  printf 'Origin: fieldgate\nLabel: fieldgate\nSuite: stable\nCodename: fieldgate\n'
  printf 'Date: %s\n' "$(LC_ALL=C date -u -R)"
  printf 'Architectures: %s\n' "${archs% }"
  printf 'Description: fieldgate releases (scripts/apt-repo.sh)\n'
  local sum
  for sum in MD5Sum:md5sum SHA256:sha256sum; do
    printf '%s:\n' "${sum%%:*}"
    for f in Packages Packages.gz; do
      printf ' %s %s %s\n' "$(${sum#*:} "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "$f"
    done
  done
}

main() {
  mkdir -p "$DIR/pool"
  local deb
  for deb in "$@"; do install -m 0644 "$deb" "$DIR/pool/$(basename "$deb")"; done
  local removed
  removed="$(keep_newest_debs "$DIR/pool" "$FIELDGATE_KEEP_RELEASES" | wc -l)"
  [ "$removed" = 0 ] || say "removed $removed older package(s) from the pool, kept the $FIELDGATE_KEEP_RELEASES newest per architecture (FIELDGATE_KEEP_RELEASES)"
  ensure_key
  cd "$DIR"
  # Flat: Filename: pool/x.deb, relative to the directory the deb line names.
  dpkg-scanpackages --multiversion pool /dev/null 2>/dev/null >Packages.new
  mv Packages.new Packages
  gzip -9nc Packages >Packages.gz
  release_file >Release
  rm -f InRelease Release.gpg
  gpg_key --local-user "$KEY_NAME" --digest-algo SHA256 --clearsign --output InRelease Release
  gpg_key --local-user "$KEY_NAME" --digest-algo SHA256 --armor --detach-sign --output Release.gpg Release
  gpg_key --export "$KEY_NAME" >fieldgate-archive-keyring.gpg.new
  mv fieldgate-archive-keyring.gpg.new fieldgate-archive-keyring.gpg
  chmod 0644 Packages Packages.gz Release InRelease Release.gpg fieldgate-archive-keyring.gpg
  say "$DIR: $(grep -c '^Package:' Packages) package(s), signed by $(gpg_key --list-keys --with-colons "$KEY_NAME" | sed -n 's/^fpr:*\([0-9A-F]*\):$/\1/p' | head -1)"
}

main "$@"
