// Reads files whole, in one process, and prints per file the milliseconds from open to the last
// byte (1 MiB reads): a view's own cost without a reader process's start (fork + exec of `cat`
// costs ~5 ms on the 2-core machines here, more than a small slice takes).
//   readtime FILE...
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: readtime FILE...\n");
    return 2;
  }
  std::vector<char> buf(1 << 20);
  for (int i = 1; i < argc; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const int fd = ::open(argv[i], O_RDONLY);
    if (fd < 0) {
      std::perror(argv[i]);
      return 1;
    }
    ssize_t n;
    while ((n = ::read(fd, buf.data(), buf.size())) > 0) {
    }
    ::close(fd);
    if (n < 0) {
      std::perror(argv[i]);
      return 1;
    }
    std::printf(
        "%.3f\n",
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return 0;
}
