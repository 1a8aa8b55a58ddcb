#!/usr/bin/env bash
# Stops what start.sh DIR started: SIGTERM to the server's process group, SIGKILL after 5 s.
# Idempotent; exit 0 once none of the processes runs (a zombie left for its parent counts as
# stopped: the test fixture, a child subreaper, reaps it).
set -uo pipefail
DIR=${1:?usage: stop.sh DIR}
PIDS="$DIR/pids"
[ -f "$PIDS" ] || exit 0

alive() {  # pid: running, and not a zombie
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

pids=$(awk '{print $2}' "$PIDS")
for sig in TERM KILL; do
  for p in $pids; do
    alive "$p" && { kill -"$sig" -- "-$p" 2>/dev/null || kill -"$sig" "$p" 2>/dev/null; }
  done
  for _ in $(seq 50); do
    left=""
    for p in $pids; do alive "$p" && left="$left $p"; done
    [ -z "$left" ] && { rm -f "$PIDS"; exit 0; }
    sleep 0.1
  done
done
echo "stop.sh: still running:$left" >&2
exit 1
