#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 10: the CI smoke run),
# seeded from the shared corpus. Long run: bash tests/fuzz/run.sh 1800
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-10}
CORPUS=${OMICSFS_CORPUS_DIR:-../shared/corpus}
B=build-fuzz
cmake -S . -B $B -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 -DOMICSFS_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build $B -j"$(nproc)" >/dev/null
S=$B/seeds
rm -rf $S && mkdir -p $S/fuzz_bp128 $S/fuzz_codecs $S/fuzz_zarr $S/fuzz_bpcells $S/fuzz_datg
i=0
# Codec seeds: real Zarr chunks, prefixed with the selector byte of their codec.
for f in $(find $CORPUS/vcf-zarr -path '*call_*' -type f ! -name '.*' | head -40); do
  i=$((i + 1)); { printf '\x00\x10'; cat "$f"; } > $S/fuzz_codecs/blosc_$i
done
for f in $CORPUS/datg/*.datg; do
  i=$((i + 1)); { printf '\x05\x10'; head -c 4096 "$f"; } > $S/fuzz_codecs/lz4frame_$i
done
for f in $(find $CORPUS/vcf-zarr -name .zarray | head -40); do
  d=$(dirname "$f"); c=$(find "$d" -type f ! -name '.*' | head -1)
  i=$((i + 1)); { cat "$f"; printf '\x00'; [ -n "$c" ] && cat "$c"; } > $S/fuzz_zarr/v2_$i
done
for f in $(find $CORPUS/vcf-zarr -name zarr.json | head -20); do i=$((i + 1)); cp "$f" $S/fuzz_zarr/v3_$i; done
cp $CORPUS/datg/tiny_3x4.datg $CORPUS/datg/legacy_lz4block_300x7.datg $CORPUS/datg/edge_1x1.datg $S/fuzz_datg/
for f in $CORPUS/bpcells/dir/v2/counts.packed/index_data $CORPUS/bpcells/dir/v2/frags.packed/start_data; do
  i=$((i + 1)); head -c 600 "$f" > $S/fuzz_bp128/s_$i; head -c 900 "$f" > $S/fuzz_bpcells/s_$i
done
status=0
for t in fuzz_bp128 fuzz_codecs fuzz_zarr fuzz_bpcells fuzz_datg; do
  mkdir -p $B/work/$t
  echo "== $t (${SECONDS_PER_TARGET}s)"
  if ! ./$B/tests/fuzz/$t -max_total_time=$SECONDS_PER_TARGET -rss_limit_mb=3072 -malloc_limit_mb=1024 -max_len=65536 \
       -artifact_prefix=$B/work/$t/ $B/work/$t $S/$t 2>&1 | grep -E "^#[0-9]+.*DONE|ERROR|SUMMARY|Done [0-9]+ runs"; then
    status=1
  fi
  ls $B/work/$t/crash-* $B/work/$t/leak-* $B/work/$t/timeout-* 2>/dev/null && status=1
done
exit $status
