# Shared helpers of the benchmark scripts (sourced). Needs BUILD, SRC (the mounted source) and MNT.
BUILD=${BUILD:-build-bench}
# NO_BUILD=1: BUILD is used as it is (a developer's build keeps its own configuration).
build_targets() {
  [ -z "${NO_BUILD:-}" ] || return 0
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target omicsfs "$@" >/dev/null
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
mb_s() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
# mount_fs [omicsfs options...]: mounts $SRC at $MNT in the foreground daemon $DAEMON.
mount_fs() {
  ./"$BUILD"/mount/omicsfs -f "$@" "$SRC" "$MNT" 2>/dev/null &
  DAEMON=$!
  for _ in $(seq 500); do mountpoint -q "$MNT" && return; sleep 0.02; done
  echo "mount failed"; exit 1
}
umount_fs() { fusermount3 -u "$MNT"; wait "$DAEMON" || true; }
# timed_cat FILE: seconds to read FILE sequentially.
timed_cat() { local t0 t1; t0=$(now); cat "$1" > /dev/null; t1=$(now); secs "$t0" "$t1"; }
# timed_size FILE: prints "SIZE SECONDS" of the first stat (the sizing pass).
timed_size() { local t0 t1 s; t0=$(now); s=$(stat -c %s "$1"); t1=$(now); echo "$s $(secs "$t0" "$t1")"; }
# machine_line: prints the machine line every benchmark prints first, and sets FUSE_MBS: the price
# of fresh memory (bench/pagecost), and the ceiling of FUSE here: `cat` of 2 GB served from memory
# by bench/memfs, no decoding (best of REPS, default 3). Needs the pagecost and memfs targets.
machine_line() {
  local page_us page_ms huge_ms first_ms fuse_s=1e9 dev
  read -r page_us page_ms huge_ms first_ms < <(./"$BUILD"/bench/pagecost)
  for _ in $(seq "${REPS:-3}"); do  # a fresh mount each time, as for the views: nothing in the page cache
    ./"$BUILD"/bench/memfs 2000000000 "$MNT" & DAEMON=$!
    for _ in $(seq 500); do mountpoint -q "$MNT" && break; sleep 0.02; done
    dev=$(awk -v m="$MNT" '$5 == m { print $3 }' /proc/self/mountinfo | tail -1)
    echo 1024 > /sys/class/bdi/$dev/read_ahead_kb 2>/dev/null || true  # as omicsfs does
    fuse_s=$(awk -v a="$fuse_s" -v b="$(timed_cat "$MNT/data")" 'BEGIN { print (a < b ? a : b) }')
    umount_fs
  done
  FUSE_MBS=$(awk -v s="$fuse_s" 'BEGIN { printf "%.0f", 2000 / s }')
  echo "machine: fresh 4 KiB page ${page_us} us (256 MiB in ${page_ms} ms; with MADV_HUGEPAGE ${huge_ms} ms, ${first_ms} ms a new process's first); FUSE ceiling (memfs, no decode) ${FUSE_MBS} MB/s; $(nproc) cores"
}
MNT=$(mktemp -d /tmp/omicsfs-bench-XXXXXX)
trap 'mountpoint -q "$MNT" && fusermount3 -uz "$MNT"; rmdir "$MNT"' EXIT
