#!/usr/bin/env bash
# BPCells fragments benchmark, one run: cat of fragments.tsv through the mount vs zcat of the
# same text gzipped.   bash bench/bpcells_fragments.sh [N]   (default 10 000 000 fragments)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000000}
BUILD=build-bench
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build $BUILD -j"$(nproc)" --target omicsfs gen_bpcells_fragments >/dev/null
DATA=bench/data/fragments_$N
mkdir -p $DATA/src
[ -f $DATA/src/atac.packed/version ] || ./$BUILD/bench/gen_bpcells_fragments $DATA/src/atac.packed $N
MNT=$(mktemp -d /tmp/omicsfs-bench-XXXXXX)
now() { date +%s.%N; }
mount_fs() { ./$BUILD/mount/omicsfs -f "$@" $DATA/src $MNT 2>/dev/null & DAEMON=$!
             for _ in $(seq 500); do mountpoint -q $MNT && return; sleep 0.02; done; echo "mount failed"; exit 1; }
umount_fs() { fusermount3 -u $MNT; wait $DAEMON || true; }
trap 'mountpoint -q $MNT && fusermount3 -uz $MNT; rmdir $MNT' EXIT
V=$MNT/atac.packed/fragments.tsv
mount_fs -o cache_size=64M
t0=$(now); SIZE=$(stat -c %s $V); t1=$(now)
SIZING=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')
t0=$(now); cat $V > /dev/null; t1=$(now)
CAT=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
[ -f $DATA/fragments.tsv.gz ] || gzip -6 -c $V > $DATA/fragments.tsv.gz
umount_fs
t0=$(now); zcat $DATA/fragments.tsv.gz > /dev/null; t1=$(now)
ZCAT=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
mb_s() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
echo "fragments.tsv: $SIZE bytes ($N fragments)"
echo "sizing pass (first stat):         ${SIZING} s"
echo "cat through mount (64M cache):    $(mb_s $SIZE $CAT) MB/s"
echo "zcat of the same text (gzip -6):  $(mb_s $SIZE $ZCAT) MB/s"
awk -v c=$CAT -v z=$ZCAT 'BEGIN { printf "ratio cat/zcat: %.2fx\n", z / c }'
