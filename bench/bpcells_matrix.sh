#!/usr/bin/env bash
# BPCells matrix benchmark, one run, figures as ratios against zcat measured in the same run.
#   bash bench/bpcells_matrix.sh [ROWS COLS DENSITY]     (default 20000 50000 0.03)
# Prints: sizing-pass time, cat MB/s of matrix.mtx through the mount (fresh mount each time), and
# zcat MB/s of the same text gzipped (level 6) — and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-20000} COLS=${2:-50000} DENSITY=${3:-0.03}
BUILD=build-bench
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build $BUILD -j"$(nproc)" --target omicsfs gen_bpcells_matrix >/dev/null
DATA=bench/data/bpcells_${ROWS}x${COLS}_${DENSITY}
mkdir -p bench/data
[ -f $DATA/store/version ] || { mkdir -p $DATA; ./$BUILD/bench/gen_bpcells_matrix $DATA/store $ROWS $COLS $DENSITY; }
MNT=$(mktemp -d /tmp/omicsfs-bench-XXXXXX)
now() { date +%s.%N; }
mb_s() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
mount_fs() { ./$BUILD/mount/omicsfs -f "$@" $DATA/store $MNT 2>/dev/null & DAEMON=$!
             for _ in $(seq 500); do mountpoint -q $MNT && return; sleep 0.02; done; echo "mount failed"; exit 1; }
umount_fs() { fusermount3 -u $MNT; wait $DAEMON || true; }
trap 'mountpoint -q $MNT && fusermount3 -uz $MNT; rmdir $MNT' EXIT

mount_fs
t0=$(now); SIZE=$(stat -c %s $MNT/matrix.mtx); t1=$(now)
SIZING=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')
t0=$(now); cat $MNT/matrix.mtx > /dev/null; t1=$(now)
CAT_WARM=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
[ -f $DATA/matrix.mtx.gz ] || gzip -6 -c $MNT/matrix.mtx > $DATA/matrix.mtx.gz
umount_fs

# Cold: a fresh mount with a small cache, so nearly every chunk is decoded again during cat.
mount_fs -o cache_size=64M
stat -c %s $MNT/matrix.mtx > /dev/null
t0=$(now); cat $MNT/matrix.mtx > /dev/null; t1=$(now)
CAT_COLD=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
umount_fs

# Dense matrix.tsv of the same (col-major) store: transposition + sizing, then cat.
mount_fs -o cache_size=64M,index_dir=$DATA/index
t0=$(now); DSIZE=$(stat -c %s $MNT/matrix.tsv); t1=$(now)
DSIZING=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')
t0=$(now); cat $MNT/matrix.tsv > /dev/null; t1=$(now)
DCAT=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
umount_fs

t0=$(now); zcat $DATA/matrix.mtx.gz > /dev/null; t1=$(now)
ZCAT=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')

echo "matrix.mtx: $SIZE bytes ($ROWS x $COLS at $DENSITY)"
echo "sizing pass (first stat):                 ${SIZING} s ($(mb_s $SIZE $SIZING) MB/s of text)"
echo "cat through mount, cache seeded (1G):     $(mb_s $SIZE $CAT_WARM) MB/s"
echo "cat through mount, cache 64M (re-decode): $(mb_s $SIZE $CAT_COLD) MB/s"
echo "zcat of the same text (gzip -6):          $(mb_s $SIZE $ZCAT) MB/s"
echo "dense matrix.tsv: $DSIZE bytes; transposition + sizing ${DSIZING} s; cat $(mb_s $DSIZE $DCAT) MB/s"
awk -v w=$CAT_WARM -v c=$CAT_COLD -v z=$ZCAT -v s=$SIZING 'BEGIN {
  printf "ratio cat/zcat: seeded %.2fx, re-decode %.2fx; sizing pass vs zcat of the text: %.2fx faster\n", z / w, z / c, z / s }'
