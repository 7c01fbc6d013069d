#!/bin/sh
# /usr/bin/fieldgate: the fieldgate command on the Node runtime this package ships. Run by root
# it takes the service's environment from /etc/fieldgate/fieldgate.env (secrets, health port),
# so `fieldgate validate` and `fieldgate status` see what the service sees; variables already
# set win. Lines are KEY=VALUE as in systemd's EnvironmentFile=, comments start with # or ;.
ENV_FILE=/etc/fieldgate/fieldgate.env
if [ -r "$ENV_FILE" ]; then
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
  done < "$ENV_FILE"
fi
exec /usr/lib/fieldgate/bin/node /usr/lib/fieldgate/app/bin/fieldgate.js "$@"
