#!/bin/sh
# /usr/bin/fieldgate: the fieldgate command on the version the service runs
# (/usr/lib/fieldgate/current, docs/install.md "Versions"), with the service's environment: the
# unit's variables (/usr/lib/fieldgate/service.env) and the admin's (/etc/fieldgate/fieldgate.env,
# root only), read by the command itself with the same parser as systemd's EnvironmentFile=.
# Variables already set win. FIELDGATE_TREE picks another installed tree (postinst validates
# with the package's new one before switching).
# The contract with a tree kept after a refused upgrade: a tree whose RELEASE file does not say
# env-files=yes (older ones: 0.1.0 and the builds before the command read FIELDGATE_ENV_FILES)
# gets the files' variables exported here, as the wrappers of those versions did, so the README's
# `fieldgate validate` and `reload --config` see the secrets there too.
: "${FIELDGATE_ENV_FILES=/usr/lib/fieldgate/service.env:/etc/fieldgate/fieldgate.env}"
export FIELDGATE_ENV_FILES
tree="${FIELDGATE_TREE:-/usr/lib/fieldgate/current}"
[ -x "$tree/bin/node" ] || tree=/usr/lib/fieldgate/package

# KEY=VALUE lines as systemd's EnvironmentFile= reads them (comments # and ;, one level of
# quotes), each variable exported only when not set yet: the files are read last first, so a
# later file wins over an earlier one and the caller's environment over both.
export_env_file() {
  [ -r "$1" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    case "$line" in ''|'#'*|';'*) continue ;; esac
    key="${line%%=*}"
    case "$key" in ''|*[!A-Za-z0-9_]*|[0-9]*) continue ;; esac
    [ "$key" != "$line" ] || continue
    value="${line#*=}"
    case "$value" in
      \"*\") value="${value#\"}"; value="${value%\"}" ;;
      \'*\') value="${value#\'}"; value="${value%\'}" ;;
    esac
    eval "[ -z \"\${$key+set}\" ]" && export "$key=$value"
  done <"$1"
}
if ! grep -qx 'env-files=yes' "$tree/RELEASE" 2>/dev/null; then
  reversed=""
  old_ifs="$IFS"; IFS=:
  for file in $FIELDGATE_ENV_FILES; do reversed="$file${reversed:+:$reversed}"; done
  for file in $reversed; do IFS="$old_ifs"; export_env_file "$file"; IFS=:; done
  IFS="$old_ifs"
fi
# glibc's malloc as service.env sets it for the unit (GLIBC_TUNABLES, why: see there), so that
# `fieldgate run` holds the same memory as the service: glibc reads it before node starts, too
# early for the command's own reading of the files.
: "${GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072}"
export GLIBC_TUNABLES
exec "$tree/bin/node" "$tree/app/bin/fieldgate.js" "$@"
