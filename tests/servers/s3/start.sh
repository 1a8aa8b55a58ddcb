#!/usr/bin/env bash
# Starts a one-node OpenStack Swift with s3api (S3 that checks SigV4 signatures) on 127.0.0.1.
#   start.sh DIR            all state, configs and logs under DIR (created); prints DIR/s3.env:
#                           S3_ENDPOINT, S3_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
#   start.sh DIR --resume   starts again what stop.sh DIR stopped: same ports, keys and objects
# Exit 0 once a signed PUT/GET/DELETE round trip works. On failure, exit 1 with the servers' logs
# on stderr, and every process it started is stopped (stop.sh DIR). Needs Debian's swift-proxy,
# swift-account, swift-container and swift-object (.ci/setup installs them).
set -euo pipefail
DIR=${1:?usage: start.sh DIR [--resume]}
RESUME=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
# Debian's python3 (with the swift modules), not whatever python3 comes first on PATH.
PY=/usr/bin/python3
TIMEOUT=${OMICSFS_S3_START_TIMEOUT:-90}

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
"$HERE/stop.sh" "$DIR"
if [ "$RESUME" != --resume ]; then
  rm -rf "$DIR/etc" "$DIR/srv" "$DIR/log" "$DIR/s3.env"
fi
mkdir -p "$DIR/log"

fail() {
  echo "start.sh: $1" >&2
  "$HERE/stop.sh" "$DIR" || true
  for f in "$DIR"/log/*.log; do
    [ -f "$f" ] && { echo "== $f" >&2; tail -n 40 "$f" >&2; }
  done
  exit 1
}
trap 'fail "interrupted"' INT TERM

if [ "$RESUME" != --resume ]; then
  "$PY" "$HERE/swift_s3.py" setup "$DIR" > "$DIR/log/setup.log" 2>&1 || fail "setup failed"
elif [ ! -f "$DIR/s3.env" ]; then
  fail "--resume: nothing to resume in $DIR"
fi
# setsid: the server leads its own process group, which stop.sh signals as a whole.
PYTHONPATH="$HERE" setsid "$PY" "$HERE/swift_s3.py" serve "$DIR" \
  < /dev/null >> "$DIR/log/swift.log" 2>&1 &
echo "swift $!" >> "$DIR/pids"
PYTHONPATH="$HERE" "$PY" "$HERE/swift_s3.py" wait "$DIR" "$TIMEOUT" 2> "$DIR/log/wait.log" \
  || fail "$(cat "$DIR/log/wait.log")"
trap - INT TERM
cat "$DIR/s3.env"
