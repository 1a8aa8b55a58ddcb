#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each, seeded from the shared corpus.
#   bash tests/fuzz/run.sh          the CI smoke run: a fixed number of runs with a fixed seed
#                                   (deterministic, about 10 s per target)
#   bash tests/fuzz/run.sh 1800     a long run: 1800 s per target, random seed
# OMICSFS_UNITY=1: the library as a unity build, as CI builds it (its build-only call and its smoke
# run both pass it: a change of mode rebuilds everything).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-}
CORPUS=${OMICSFS_CORPUS_DIR:-../shared/corpus}
# OMICSFS_FUZZ_BUILD=DIR: the targets are already built there (CI's ASan+UBSan build, configured
# with clang and -DOMICSFS_FUZZ=ON: the library it tests is the one the targets fuzz).
B=${OMICSFS_FUZZ_BUILD:-build-fuzz}
# -O1, as libFuzzer's own docs build: the library compiles in ~17 % less CPU than at -O2 (the
# fuzz build is on CI's critical path), and the smoke run's fixed number of runs barely notices.
[ -n "${OMICSFS_FUZZ_BUILD:-}" ] || cmake -S . -B $B -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 -DOMICSFS_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD="$([ "${OMICSFS_UNITY:-0}" = 1 ] && echo ON || echo OFF)" >/dev/null
TARGETS=(fuzz_bp128 fuzz_codecs fuzz_zarr fuzz_bpcells fuzz_datg fuzz_vcz fuzz_h5 fuzz_zip)
# Only the fuzz targets (and fuzz_h5's vetting helper): not the daemon.
cmake --build $B -j"$(nproc)" --target "${TARGETS[@]}" >/dev/null
if [ "${OMICSFS_FUZZ_BUILD_ONLY:-0}" = 1 ]; then exit 0; fi   # CI builds beside the TSan tests
S=$B/seeds
rm -rf $S && mkdir -p $S/fuzz_bp128 $S/fuzz_codecs $S/fuzz_zarr $S/fuzz_bpcells $S/fuzz_datg $S/fuzz_vcz $S/fuzz_h5 $S/fuzz_zip
i=0
# Codec seeds: real Zarr chunks, prefixed with the selector byte of their codec.
for f in $(find $CORPUS/vcf-zarr -path '*call_*' -type f ! -name '.*' | sort | head -40); do
  i=$((i + 1)); { printf '\x00\x10'; cat "$f"; } > $S/fuzz_codecs/blosc_$i
done
for f in $CORPUS/datg/*.datg; do
  i=$((i + 1)); { printf '\x05\x10'; head -c 4096 "$f"; } > $S/fuzz_codecs/lz4frame_$i
done
for f in $(find $CORPUS/vcf-zarr -name .zarray | sort | head -40); do
  d=$(dirname "$f"); c=$(find "$d" -type f ! -name '.*' | sort | head -1)
  i=$((i + 1)); { cat "$f"; printf '\x00'; [ -n "$c" ] && cat "$c"; } > $S/fuzz_zarr/v2_$i
done
for f in $(find $CORPUS/vcf-zarr -name zarr.json | sort | head -20); do i=$((i + 1)); cp "$f" $S/fuzz_zarr/v3_$i; done
cp $CORPUS/datg/tiny_3x4.datg $CORPUS/datg/legacy_lz4block_300x7.datg $CORPUS/datg/edge_1x1.datg $S/fuzz_datg/
for f in $CORPUS/bpcells/dir/v2/counts.packed/index_data $CORPUS/bpcells/dir/v2/frags.packed/start_data; do
  i=$((i + 1)); head -c 600 "$f" > $S/fuzz_bp128/s_$i; head -c 900 "$f" > $S/fuzz_bpcells/s_$i
done
# Whole HDF5 files (the small ones: matrices with variable-length names, fragments, a 10x file).
cp $CORPUS/bpcells/h5/counts_root_group.h5 $CORPUS/bpcells/h5/counts_gzip.h5 $CORPUS/bpcells/h5/frags_gzip.h5 \
   $CORPUS/bpcells/h5/filtered_feature_bc_matrix.h5 $S/fuzz_h5/
# Seeds of this project's own (tests/testutil writer): string datasets chunked, with and without
# shuffle + deflate, which BPCells never writes.
for d in tests/fuzz/seeds/*/; do cp "$d"* "$S/$(basename "$d")/"; done
# Whole VCF Zarr stores, serialised as [u8 key length][key][u16 LE length][value] records.
for store in sample/sample.vcz triploid/triploid.vcz mixed_ploidy/mixed_ploidy.vcz sample_v3_s2/sample_v3_s2.vcz \
             field_type_combos/field_type_combos.vcz; do
  python3 - "$CORPUS/vcf-zarr/$store" "$S/fuzz_vcz/$(basename $store)" <<'PY'
import os, struct, sys
root, out = sys.argv[1], sys.argv[2]
with open(out, "wb") as f:
    for d, _, files in sorted(os.walk(root)):
        for n in sorted(files):
            p = os.path.join(d, n)
            key = os.path.relpath(p, root).encode()
            data = open(p, "rb").read()
            if n == ".zmetadata" or len(key) > 255 or len(data) > 65535:
                continue
            f.write(bytes([len(key)]) + key + struct.pack("<H", len(data)) + data)
PY
done
# Small VCF Zarr stores zipped the ways zarr's ZipStore (Python's zipfile) writes them: stored,
# deflated, and with every size and offset in ZIP64 fields and ZIP64 end records.
for store in sample/sample.vcz triploid/triploid.vcz; do
  python3 - "$CORPUS/vcf-zarr/$store" "$S/fuzz_zip/$(basename $store)" <<'PY'
import os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
files = sorted((os.path.relpath(os.path.join(d, n), root), os.path.join(d, n))
               for d, _, names in os.walk(root) for n in names)
def write(path, method):
    with zipfile.ZipFile(path, "w") as zf:
        for i, (key, src) in enumerate(files):
            zf.write(src, key, method if method is not None else (i % 2) * zipfile.ZIP_DEFLATED)
write(out + ".stored.zip", zipfile.ZIP_STORED)
write(out + ".deflated.zip", zipfile.ZIP_DEFLATED)
zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 64, 4
write(out + ".zip64.zip", None)
PY
done
# Inputs that once crashed a target stay in its seeds, so the smoke run replays them first.
for d in tests/fuzz/regressions/*/; do cp "$d"* "$S/$(basename "$d")/"; done
declare -A SMOKE_RUNS=([fuzz_bp128]=2000000 [fuzz_codecs]=60000 [fuzz_zarr]=100000 [fuzz_bpcells]=300000 [fuzz_datg]=15000 [fuzz_vcz]=3000 [fuzz_h5]=150 [fuzz_zip]=6000)
declare -A MAX_LEN=([fuzz_vcz]=262144 [fuzz_h5]=262144 [fuzz_zip]=131072)
# One libFuzzer process per target, as many at a time as there are cores (each is single-threaded);
# each target's lines are printed when it ends.
fuzz_one() {
  local t=$1 limit
  rm -rf $B/work/$t && mkdir -p $B/work/$t
  if [ -n "$SECONDS_PER_TARGET" ]; then
    limit="-max_total_time=$SECONDS_PER_TARGET"
  else
    limit="-runs=${SMOKE_RUNS[$t]} -seed=1"
  fi
  echo "== $t ($limit)" > $B/work/$t.log
  local ok=0
  LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp ./$B/tests/fuzz/$t $limit -rss_limit_mb=3072 -malloc_limit_mb=1024 -max_len=${MAX_LEN[$t]:-65536} \
    -artifact_prefix=$B/work/$t/ $B/work/$t $S/$t > $B/work/$t.out 2>&1 || ok=1
  grep -E "^#[0-9]+.*DONE|ERROR|SUMMARY|Done [0-9]+ runs" $B/work/$t.out >> $B/work/$t.log || ok=1
  ls $B/work/$t/crash-* $B/work/$t/leak-* $B/work/$t/timeout-* >> $B/work/$t.log 2>/dev/null && ok=1
  cat $B/work/$t.log
  return $ok
}
status=0
running=0
pids=()
for t in "${TARGETS[@]}"; do
  fuzz_one $t & pids+=($!)
  running=$((running + 1))
  if [ $running -ge "$(nproc)" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ $running -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
