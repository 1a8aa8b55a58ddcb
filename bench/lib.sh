# Shared helpers of the benchmark scripts (sourced). Needs BUILD, SRC (the mounted source) and MNT.
BUILD=${BUILD:-build-bench}
build_targets() {
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
MNT=$(mktemp -d /tmp/omicsfs-bench-XXXXXX)
trap 'mountpoint -q "$MNT" && fusermount3 -uz "$MNT"; rmdir "$MNT"' EXIT
