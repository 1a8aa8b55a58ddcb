#!/usr/bin/env bash
# BPCells fragments benchmark, one run: cat of fragments.tsv through the mount vs zcat of the
# same text gzipped.   bash bench/bpcells_fragments.sh [N]   (default 10 000 000 fragments)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-10000000}
build_targets gen_bpcells_fragments
DATA=bench/data/fragments_$N
SRC=$DATA/src
mkdir -p $SRC
[ -f $SRC/atac.packed/version ] || ./$BUILD/bench/gen_bpcells_fragments $SRC/atac.packed $N
V=$MNT/atac.packed/fragments.tsv
mount_fs -o cache_size=64M,rebuild_index
read -r SIZE SIZING < <(timed_size $V)
CAT=$(timed_cat $V)
[ -f $DATA/fragments.tsv.gz ] || gzip -6 -c $V > $DATA/fragments.tsv.gz
umount_fs
t0=$(now); zcat $DATA/fragments.tsv.gz > /dev/null; ZCAT=$(secs $t0 $(now))
echo "fragments.tsv: $SIZE bytes ($N fragments)"
echo "sizing pass (first stat):         ${SIZING} s"
echo "cat through mount (64M cache):    $(mb_s $SIZE $CAT) MB/s"
echo "zcat of the same text (gzip -6):  $(mb_s $SIZE $ZCAT) MB/s"
awk -v c=$CAT -v z=$ZCAT 'BEGIN { printf "ratio cat/zcat: %.2fx\n", z / c }'
