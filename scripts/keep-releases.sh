# Sourced by scripts/package.sh and scripts/apt-repo.sh: how many releases a build keeps, so that
# pkg/ and the repository's pool do not grow by two packages with every commit built.
# FIELDGATE_KEEP_RELEASES (or package.sh --keep): a count of versions per architecture (default 5),
# or "all" to keep every one.

FIELDGATE_KEEP_RELEASES="${FIELDGATE_KEEP_RELEASES:-5}"

# Exits 64 with why when the setting is neither a positive count nor "all".
check_keep_releases() {
  case "$1" in
    all) ;;
    ''|*[!0-9]*|0) printf 'keep releases: "%s" is not a count of versions (1 or more) or "all" (FIELDGATE_KEEP_RELEASES, --keep)\n' "$1" >&2; exit 64 ;;
  esac
}

# Versions on stdin, one a line; newest first on stdout, in dpkg's order (digit runs compare as
# numbers: +10.g... after +9.g...; sort -V does not know dpkg's "~" and "+" rules). sort -rV first
# puts nearly all in place, so the insertion by dpkg --compare-versions (one process a comparison)
# costs about one comparison a version, not n^2/4: a pkg/ of 300 builds per architecture is pruned
# in seconds, not minutes.
dpkg_sort_newest_first() {
  local sorted=() v i j
  while IFS= read -r v; do
    [ -n "$v" ] || continue
    i=${#sorted[@]}
    sorted+=("$v")
    while [ "$i" -gt 0 ] && dpkg --compare-versions "${sorted[$((i - 1))]}" lt "$v"; do
      j=$((i - 1))
      sorted[i]="${sorted[j]}"
      i=$j
    done
    sorted[i]="$v"
  done < <(LC_ALL=C sort -rV)
  [ ${#sorted[@]} -eq 0 ] || printf '%s\n' "${sorted[@]}"
}

# keep_newest_debs DIR KEEP: of DIR's fieldgate_<version>_<arch>.deb, the KEEP newest versions of
# each architecture stay; the others are removed and their paths printed, one a line.
keep_newest_debs() {
  local dir="$1" keep="$2" arch v
  check_keep_releases "$keep"
  [ "$keep" != all ] || return 0
  [ -d "$dir" ] || return 0
  local arches versions
  mapfile -t arches < <(find "$dir" -maxdepth 1 -type f -name 'fieldgate_*_*.deb' -printf '%f\n' | sed -n 's/^fieldgate_[^_]*_\([^_]*\)\.deb$/\1/p' | LC_ALL=C sort -u)
  for arch in "${arches[@]}"; do
    mapfile -t versions < <(find "$dir" -maxdepth 1 -type f -name "fieldgate_*_${arch}.deb" -printf '%f\n' | sed -n "s/^fieldgate_\([^_]*\)_${arch}\.deb\$/\1/p" | dpkg_sort_newest_first)
    for v in "${versions[@]:keep}"; do
      rm -f "$dir/fieldgate_${v}_${arch}.deb"
      printf '%s\n' "$dir/fieldgate_${v}_${arch}.deb"
    done
  done
}
