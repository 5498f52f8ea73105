#!/usr/bin/env bash
# Stop the private Dovecot started by start.sh from DIR. Tolerant if it is not running.
#
#   deploy/dovecot/stop.sh DIR
set -euo pipefail

[[ $# -ge 1 && -n "$1" ]] || { echo "usage: $0 DIR" >&2; exit 1; }
DIR=$1
if [[ ! -d $DIR ]]; then
  echo "stop.sh: $DIR does not exist; nothing to stop" >&2
  exit 0
fi
DIR=$(cd "$DIR" && pwd -P)
CONF=$DIR/dovecot.conf
PIDFILE=$DIR/run/master.pid

pid=
if [[ -f $PIDFILE ]]; then
  pid=$(cat "$PIDFILE" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || pid=
fi
if [[ -z $pid ]]; then
  echo "stop.sh: Dovecot not running from $DIR" >&2
  exit 0
fi

if [[ -f $CONF ]]; then
  doveadm -c "$CONF" stop 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
else
  kill -TERM "$pid" 2>/dev/null || true
fi

# Wait (bounded, ~10 s) for the master to exit; it takes its children with it.
for ((t = 0; t < 100; t++)); do
  kill -0 "$pid" 2>/dev/null || { echo "stop.sh: Dovecot (pid $pid) stopped" >&2; exit 0; }
  sleep 0.1
done
echo "stop.sh: Dovecot (pid $pid) still running after 10 s; sending SIGKILL" >&2
kill -KILL "$pid" 2>/dev/null || true
exit 0
