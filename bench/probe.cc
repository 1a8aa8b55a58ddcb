// Latency probe for one file of a fresh mount (index present):
//   probe FILE [SECONDS]
// prints "ttfb_ms tail_ms iops": time to open and read the first 4 KiB, then to stat and read
// the last 1000 bytes, then 4 KiB reads at random offsets per second (one thread, for SECONDS,
// default 3, readahead disabled with POSIX_FADV_RANDOM).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: probe FILE [SECONDS]\n");
    return 2;
  }
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  std::vector<char> buf(4096);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0 || ::pread(fd, buf.data(), buf.size(), 0) <= 0) {
    std::perror(argv[1]);
    return 1;
  }
  auto t1 = Clock::now();
  ::close(fd);
  auto t2 = Clock::now();
  fd = ::open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) return 1;
  const off_t tail = st.st_size > 1000 ? st.st_size - 1000 : 0;
  if (::pread(fd, buf.data(), 1000, tail) < 0) return 1;
  auto t3 = Clock::now();
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  std::mt19937_64 rng(42);
  const uint64_t pages = std::max<uint64_t>(1, static_cast<uint64_t>(st.st_size) / 4096);
  uint64_t reads = 0;
  const auto start = Clock::now();
  auto now = start;
  while (Ms(start, now) < seconds * 1000) {
    if (::pread(fd, buf.data(), 4096, static_cast<off_t>((rng() % pages) * 4096)) < 0) return 1;
    ++reads;
    if ((reads & 15) == 0) now = Clock::now();
  }
  now = Clock::now();
  ::close(fd);
  std::printf("%.2f %.2f %.0f\n", Ms(t0, t1), Ms(t2, t3), reads / (Ms(start, now) / 1000));
  return 0;
}
