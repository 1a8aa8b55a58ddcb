#!/usr/bin/env bash
# Starts Ceph's radosgw on a one-node cluster (one monitor, one memstore OSD) on 127.0.0.1: an
# S3 closer to AWS than Swift's s3api (anonymous requests get 403 AccessDenied), for running the
# S3 tests by hand:
#   start.sh DIR                                  # writes and prints DIR/s3.env
#   OMICSFS_S3_EXTERNAL=DIR/s3.env build/tests/s3_test --gtest_filter=-*ServerStopped*
#   ../stop.sh DIR
# Not in CI: it needs ceph-mon, ceph-osd and radosgw (61 packages, 80 s to install here; .ci/setup
# does not install them), starts in 12-16 s and stops in ~5 s (the OSD waits for SIGKILL). Everything under DIR; auth between the daemons is
# off (loopback only), S3 signatures are checked.
set -euo pipefail
DIR=${1:?usage: start.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
TIMEOUT=${OMICSFS_S3_START_TIMEOUT:-120}

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
"$HERE/../stop.sh" "$DIR"
rm -rf "$DIR"/{run,log,mon.a,osd.0,rgw,ceph.conf,keyring,monmap,s3.env}
mkdir -p "$DIR"/{run,log,mon.a,osd.0,rgw}

fail() {
  echo "start.sh: $1" >&2
  "$HERE/../stop.sh" "$DIR" || true
  for f in "$DIR"/log/*; do
    [ -f "$f" ] && { echo "== $f" >&2; tail -n 20 "$f" >&2; }
  done
  exit 1
}
trap 'fail "interrupted"' INT TERM

read -r MON_PORT RGW_PORT < <("$PY" -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
FSID=$(cat /proc/sys/kernel/random/uuid)
# Gotchas, each cost a failed start:
# - msgr v1 only, in the monmap (--addv [v1:...]) and in mon_host ([v1:...]): a bare address is
#   taken as msgr v2, and the clients then hang in "AUTH_CONNECTING" against a v1 monitor;
# - ms_bind_ipv6 off: IPv6 sockets fail here (EAFNOSUPPORT) and the OSD never comes up;
# - one replica allowed (mon_allow_pool_size_one), crush leaves of type osd (chooseleaf 0);
# - mon_data_avail_warn/crit lowered: the monitor warns below 30 % free disk and shuts itself
#   down below 5 %, by the free space of the whole disk DIR is on.
cat > "$DIR/ceph.conf" <<EOC
[global]
fsid = $FSID
mon host = [v1:127.0.0.1:$MON_PORT]
mon initial members = a
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr2 = false
ms bind ipv6 = false
ms bind ipv4 = true
mon data avail warn = 1
mon data avail crit = 0
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 1073741824
run dir = $DIR/run
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
pid file = $DIR/run/\$name.pid
keyring = $DIR/keyring
mon data = $DIR/mon.\$id
osd data = $DIR/osd.\$id
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $DIR/rgw
EOC
C=(-c "$DIR/ceph.conf")
ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' \
  > "$DIR/log/setup.out" 2>&1 || fail "ceph-authtool failed"
monmaptool --create --fsid "$FSID" --addv a "[v1:127.0.0.1:$MON_PORT]" "$DIR/monmap" \
  >> "$DIR/log/setup.out" 2>&1 || fail "monmaptool failed"
ceph-mon "${C[@]}" --mkfs -i a --monmap "$DIR/monmap" >> "$DIR/log/setup.out" 2>&1 \
  || fail "ceph-mon --mkfs failed"
setsid ceph-mon "${C[@]}" -i a -f < /dev/null > "$DIR/log/mon.out" 2>&1 &
echo "mon $!" >> "$DIR/pids"
timeout 60 ceph "${C[@]}" --connect-timeout 50 osd create >> "$DIR/log/setup.out" 2>&1 \
  || fail "ceph osd create failed (is the monitor up?)"
ceph-osd "${C[@]}" -i 0 --mkfs >> "$DIR/log/setup.out" 2>&1 || fail "ceph-osd --mkfs failed"
setsid ceph-osd "${C[@]}" -i 0 -f < /dev/null > "$DIR/log/osd.out" 2>&1 &
echo "osd $!" >> "$DIR/pids"
setsid radosgw "${C[@]}" -n client.rgw -f < /dev/null > "$DIR/log/rgw.out" 2>&1 &
echo "rgw $!" >> "$DIR/pids"

SECRET=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
timeout 60 radosgw-admin "${C[@]}" user create --uid=test --display-name=test \
  --access-key=OMICSFSTEST --secret="$SECRET" >> "$DIR/log/setup.out" 2>&1 \
  || fail "radosgw-admin user create failed"
printf 'S3_ENDPOINT=http://127.0.0.1:%s\nS3_REGION=us-east-1\nAWS_ACCESS_KEY_ID=OMICSFSTEST\nAWS_SECRET_ACCESS_KEY=%s\n' \
  "$RGW_PORT" "$SECRET" > "$DIR/s3.env"
deadline=$(( $(date +%s) + TIMEOUT ))
until "$PY" "$HERE/../s3cli.py" --env "$DIR/s3.env" mb omicsfs-probe > "$DIR/log/wait.out" 2>&1; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "radosgw not answering after $TIMEOUT s"
  sleep 0.5
done
trap - INT TERM
cat "$DIR/s3.env"
