#!/usr/bin/env bash
# VCF Zarr benchmark, one run: cat of STEM.vcf through the mount vs `bcftools view` of the same
# records stored as BCF (made once with `bcftools view -Ob` from the mounted text).
#   bash bench/vcz.sh [VARIANTS SAMPLES]     (default 100000 500; chunks 1000 x 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
NV=${1:-100000} NS=${2:-500}
build_targets gen_vcz
DATA=bench/data/vcz_${NV}x${NS}
SRC=$DATA/src
mkdir -p $SRC
[ -f $SRC/cohort.vcz/.zgroup ] || ./$BUILD/bench/gen_vcz $SRC/cohort.vcz $NV $NS 1000 10000
VCF=$MNT/cohort.vcz/cohort.vcf
mount_fs -o rebuild_index
read -r SIZE SIZING < <(timed_size $VCF)
CAT_WARM=$(timed_cat $VCF)
[ -f $DATA/cohort.bcf ] || bcftools view --no-version -Ob -o $DATA/cohort.bcf $VCF
umount_fs
mount_fs -o cache_size=64M
stat -c %s $VCF > /dev/null
CAT_COLD=$(timed_cat $VCF)
umount_fs
t0=$(now); bcftools view --no-version $DATA/cohort.bcf > /dev/null; BCF=$(secs $t0 $(now))
echo "cohort.vcf: $SIZE bytes ($NV variants x $NS samples)"
echo "sizing pass (first stat):                 ${SIZING} s ($(mb_s $SIZE $SIZING) MB/s of text)"
echo "cat through mount, cache seeded (1G):     $(mb_s $SIZE $CAT_WARM) MB/s"
echo "cat through mount, cache 64M (re-decode): $(mb_s $SIZE $CAT_COLD) MB/s"
echo "bcftools view of the BCF:                 $(mb_s $SIZE $BCF) MB/s"
awk -v w=$CAT_WARM -v c=$CAT_COLD -v b=$BCF 'BEGIN { printf "ratio cat/bcftools: seeded %.2fx, re-decode %.2fx\n", b / w, b / c }'
