#!/usr/bin/env bash
# BPCells matrix benchmark, one run, figures as ratios against zcat measured in the same run.
#   bash bench/bpcells_matrix.sh [ROWS COLS DENSITY]     (default 20000 50000 0.03)
# Prints: sizing-pass time, cat MB/s of matrix.mtx through the mount (fresh mount each time), zcat
# MB/s of the same text gzipped (level 6), their ratio, and the dense matrix.tsv of the store.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
ROWS=${1:-20000} COLS=${2:-50000} DENSITY=${3:-0.03}
build_targets gen_bpcells_matrix
DATA=bench/data/bpcells_${ROWS}x${COLS}_${DENSITY}
SRC=$DATA/store
[ -f $SRC/version ] || { mkdir -p $DATA; ./$BUILD/bench/gen_bpcells_matrix $SRC $ROWS $COLS $DENSITY; }

mount_fs -o rebuild_index
read -r SIZE SIZING < <(timed_size $MNT/matrix.mtx)
CAT_WARM=$(timed_cat $MNT/matrix.mtx)
[ -f $DATA/matrix.mtx.gz ] || gzip -6 -c $MNT/matrix.mtx > $DATA/matrix.mtx.gz
umount_fs

# Cold: a fresh mount with a small cache, so nearly every chunk is decoded again during cat.
mount_fs -o cache_size=64M
stat -c %s $MNT/matrix.mtx > /dev/null
CAT_COLD=$(timed_cat $MNT/matrix.mtx)
umount_fs

# Dense matrix.tsv of the same (col-major) store: transposition + sizing, then cat.
mount_fs -o cache_size=64M,rebuild_index,index_dir=$DATA/index
read -r DSIZE DSIZING < <(timed_size $MNT/matrix.tsv)
DCAT=$(timed_cat $MNT/matrix.tsv)
umount_fs

t0=$(now); zcat $DATA/matrix.mtx.gz > /dev/null; ZCAT=$(secs $t0 $(now))
echo "matrix.mtx: $SIZE bytes ($ROWS x $COLS at $DENSITY)"
echo "sizing pass (first stat):                 ${SIZING} s ($(mb_s $SIZE $SIZING) MB/s of text)"
echo "cat through mount, cache seeded (1G):     $(mb_s $SIZE $CAT_WARM) MB/s"
echo "cat through mount, cache 64M (re-decode): $(mb_s $SIZE $CAT_COLD) MB/s"
echo "zcat of the same text (gzip -6):          $(mb_s $SIZE $ZCAT) MB/s"
echo "dense matrix.tsv: $DSIZE bytes; transposition + sizing ${DSIZING} s; cat $(mb_s $DSIZE $DCAT) MB/s"
awk -v w=$CAT_WARM -v c=$CAT_COLD -v z=$ZCAT -v s=$SIZING 'BEGIN {
  printf "ratio cat/zcat: seeded %.2fx, re-decode %.2fx; sizing pass vs zcat of the text: %.2fx faster\n", z / w, z / c, z / s }'
