#!/usr/bin/env bash
# VCF Zarr benchmark, one run: cat of STEM.vcf through the mount vs `bcftools view` of the same
# records stored as BCF (made once with `bcftools view -Ob` from the mounted text).
#   bash bench/vcz.sh [VARIANTS SAMPLES]     (default 100000 500; chunks 1000 x 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
NV=${1:-100000} NS=${2:-500}
BUILD=build-bench
cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build $BUILD -j"$(nproc)" --target omicsfs gen_vcz >/dev/null
DATA=bench/data/vcz_${NV}x${NS}
mkdir -p $DATA/src
[ -f $DATA/src/cohort.vcz/.zgroup ] || ./$BUILD/bench/gen_vcz $DATA/src/cohort.vcz $NV $NS 1000 10000
MNT=$(mktemp -d /tmp/omicsfs-bench-XXXXXX)
now() { date +%s.%N; }
mount_fs() { ./$BUILD/mount/omicsfs -f "$@" $DATA/src $MNT 2>/dev/null & DAEMON=$!
             for _ in $(seq 500); do mountpoint -q $MNT && return; sleep 0.02; done; echo "mount failed"; exit 1; }
umount_fs() { fusermount3 -u $MNT; wait $DAEMON || true; }
trap 'mountpoint -q $MNT && fusermount3 -uz $MNT; rmdir $MNT' EXIT
VCF=$MNT/cohort.vcz/cohort.vcf

mount_fs
t0=$(now); SIZE=$(stat -c %s $VCF); t1=$(now)
SIZING=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')
t0=$(now); cat $VCF > /dev/null; t1=$(now)
CAT_WARM=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
[ -f $DATA/cohort.bcf ] || bcftools view --no-version -Ob -o $DATA/cohort.bcf $VCF
umount_fs

mount_fs -o cache_size=64M
stat -c %s $VCF > /dev/null
t0=$(now); cat $VCF > /dev/null; t1=$(now)
CAT_COLD=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')
umount_fs

t0=$(now); bcftools view --no-version $DATA/cohort.bcf > /dev/null; t1=$(now)
BCF=$(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')

mb_s() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
echo "cohort.vcf: $SIZE bytes ($NV variants x $NS samples)"
echo "sizing pass (first stat):                 ${SIZING} s ($(mb_s $SIZE $SIZING) MB/s of text)"
echo "cat through mount, cache seeded (1G):     $(mb_s $SIZE $CAT_WARM) MB/s"
echo "cat through mount, cache 64M (re-decode): $(mb_s $SIZE $CAT_COLD) MB/s"
echo "bcftools view of the BCF:                 $(mb_s $SIZE $BCF) MB/s"
awk -v w=$CAT_WARM -v c=$CAT_COLD -v b=$BCF 'BEGIN { printf "ratio cat/bcftools: seeded %.2fx, re-decode %.2fx\n", b / w, b / c }'
