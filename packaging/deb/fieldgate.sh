#!/bin/sh
# /usr/bin/fieldgate: the fieldgate command on the version the service runs
# (/usr/lib/fieldgate/current, docs/install.md "Versions"), with the service's environment: the
# unit's variables (/usr/lib/fieldgate/service.env) and the admin's (/etc/fieldgate/fieldgate.env,
# root only), read by the command itself with the same parser as systemd's EnvironmentFile=.
# Variables already set win. FIELDGATE_TREE picks another installed tree (postinst validates
# with the package's new one before switching).
: "${FIELDGATE_ENV_FILES=/usr/lib/fieldgate/service.env:/etc/fieldgate/fieldgate.env}"
export FIELDGATE_ENV_FILES
# glibc's malloc as service.env sets it for the unit (GLIBC_TUNABLES, why: see there), so that
# `fieldgate run` holds the same memory as the service: glibc reads it before node starts, too
# early for the command's own reading of the files.
: "${GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072}"
export GLIBC_TUNABLES
tree="${FIELDGATE_TREE:-/usr/lib/fieldgate/current}"
[ -x "$tree/bin/node" ] || tree=/usr/lib/fieldgate/package
exec "$tree/bin/node" "$tree/app/bin/fieldgate.js" "$@"
