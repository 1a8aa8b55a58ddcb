// A reader re-reading one region of a file, as a working set another reader's scan must not push
// out of the decode cache (bench/cache):
//   hotread FILE OFFSET BYTES PASSES [PAUSE_MS] [BLOCK]
// reads BYTES from OFFSET in BLOCK-sized preads (default 1 MiB), PASSES times, PAUSE_MS apart
// (default 0), in order. Prints one line per pass: "pass SECONDS". Mount with -o direct_io so
// that every pass reaches the daemon; a region that ends at the end of the file makes the
// daemon's read-ahead render nothing outside it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: hotread FILE OFFSET BYTES PASSES [PAUSE_MS] [BLOCK]\n");
    return 2;
  }
  const off_t offset = std::strtoll(argv[2], nullptr, 10);
  const uint64_t bytes = std::strtoull(argv[3], nullptr, 10);
  const int passes = std::atoi(argv[4]);
  const int pause_ms = argc > 5 ? std::atoi(argv[5]) : 0;
  const uint64_t block = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : (1u << 20);
  const int fd = ::open(argv[1], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::vector<char> buf(block);
  const uint64_t blocks = (bytes + block - 1) / block;
  for (int p = 0; p < passes; ++p) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t len = std::min<uint64_t>(block, bytes - b * block);
      if (::pread(fd, buf.data(), len, offset + static_cast<off_t>(b * block)) !=
          static_cast<ssize_t>(len)) {
        std::perror("pread");
        return 1;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d %.3f\n", p, s);
    std::fflush(stdout);
    if (pause_ms > 0 && p + 1 < passes)
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  ::close(fd);
  return 0;
}
