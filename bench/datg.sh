#!/usr/bin/env bash
# datg benchmark, one run: cat of matrix.tsv through the mount vs zcat of the same TSV gzipped.
#   bash bench/datg.sh [ROWS COLS]     (default 20000 5000)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-20000} COLS=${2:-5000}
BUILD=build-bench
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build $BUILD -j"$(nproc)" --target omicsfs gen_datg >/dev/null
DATA=bench/data/datg_${ROWS}x${COLS}
mkdir -p $DATA/src
[ -f $DATA/src/zscores.datg ] || ./$BUILD/bench/gen_datg $DATA/src/zscores $ROWS $COLS
MNT=$(mktemp -d /tmp/omicsfs-bench-XXXXXX)
now() { date +%s.%N; }
mount_fs() { ./$BUILD/mount/omicsfs -f "$@" $DATA/src $MNT 2>/dev/null & DAEMON=$!
             for _ in $(seq 500); do mountpoint -q $MNT && return; sleep 0.02; done; echo "mount failed"; exit 1; }
umount_fs() { fusermount3 -u $MNT; wait $DAEMON || true; }
trap 'mountpoint -q $MNT && fusermount3 -uz $MNT; rmdir $MNT' EXIT
TSV=$MNT/zscores.datg/matrix.tsv

mount_fs -o cache_size=64M
t0=$(now); SIZE=$(stat -c %s $TSV); t1=$(now)
SIZING=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')
t0=$(now); cat $TSV > /dev/null; t1=$(now)
CAT=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
[ -f $DATA/matrix.tsv.gz ] || gzip -6 -c $TSV > $DATA/matrix.tsv.gz
umount_fs

t0=$(now); zcat $DATA/matrix.tsv.gz > /dev/null; t1=$(now)
ZCAT=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
mb_s() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
echo "matrix.tsv: $SIZE bytes ($ROWS x $COLS)"
echo "sizing pass (first stat):             ${SIZING} s ($(mb_s $SIZE $SIZING) MB/s of text)"
echo "cat through mount (64M cache):        $(mb_s $SIZE $CAT) MB/s"
echo "zcat of the same text (gzip -6):      $(mb_s $SIZE $ZCAT) MB/s"
awk -v c=$CAT -v z=$ZCAT 'BEGIN { printf "ratio cat/zcat: %.2fx\n", z / c }'
