// The machine's price of fresh memory: touches 256 MiB of new anonymous memory one 4 KiB page at
// a time, then again on a mapping advised MADV_HUGEPAGE, and prints
//   "us_per_4k_page ms_per_256MiB_4k ms_per_256MiB_huge ms_first_256MiB_huge"
// (best of 3 each; the last: the process's first touch, huge pages). On VMs with free-page
// reporting or ballooning a fresh page costs ~10+ µs.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

double TouchMs(bool huge) {
  constexpr size_t kBytes = size_t{256} << 20;
  void* m = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return -1;
  if (huge) ::madvise(m, kBytes, MADV_HUGEPAGE);
  auto* p = static_cast<volatile char*>(m);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < kBytes; i += 4096) p[i] = 1;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ::munmap(m, kBytes);
  return ms;
}

}  // namespace

int main() {
  // The first touch of this process, on a huge-page mapping: what a new daemon pays for its first
  // memory (pages freed by a process that just exited may cost more than the best of three says).
  const double first_huge = TouchMs(true);
  double small = 1e9, huge = first_huge;
  for (int i = 0; i < 3; ++i) {
    small = std::min(small, TouchMs(false));
    huge = std::min(huge, TouchMs(true));
  }
  std::printf("%.2f %.1f %.1f %.1f\n", small * 1000 / 65536, small, huge, first_huge);
}
