#!/usr/bin/env bash
# datg benchmark, one run: cat of matrix.tsv through the mount vs zcat of the same TSV gzipped.
#   bash bench/datg.sh [ROWS COLS]     (default 20000 5000)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
ROWS=${1:-20000} COLS=${2:-5000}
build_targets gen_datg
DATA=bench/data/datg_${ROWS}x${COLS}
SRC=$DATA/src
mkdir -p $SRC
[ -f $SRC/zscores.datg ] || ./$BUILD/bench/gen_datg $SRC/zscores $ROWS $COLS
TSV=$MNT/zscores.datg/matrix.tsv
mount_fs -o cache_size=64M,rebuild_index
read -r SIZE SIZING < <(timed_size $TSV)
CAT=$(timed_cat $TSV)
[ -f $DATA/matrix.tsv.gz ] || gzip -6 -c $TSV > $DATA/matrix.tsv.gz
umount_fs
t0=$(now); zcat $DATA/matrix.tsv.gz > /dev/null; ZCAT=$(secs $t0 $(now))
echo "matrix.tsv: $SIZE bytes ($ROWS x $COLS)"
echo "sizing pass (first stat):             ${SIZING} s ($(mb_s $SIZE $SIZING) MB/s of text)"
echo "cat through mount (64M cache):        $(mb_s $SIZE $CAT) MB/s"
echo "zcat of the same text (gzip -6):      $(mb_s $SIZE $ZCAT) MB/s"
awk -v c=$CAT -v z=$ZCAT 'BEGIN { printf "ratio cat/zcat: %.2fx\n", z / c }'
