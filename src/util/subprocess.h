// Runs a helper program in a child process with a time limit, capturing its output. Used to let
// code that is not memory-safe on hostile input (libhdf5) parse a file where a crash or a hang
// cannot take the daemon down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace omicsfs {

struct ChildOutcome {
  int exit_code = -1;          // when it exited
  int signal = 0;              // when a signal ended it (SIGKILL after a timeout)
  bool timed_out = false;      // killed after `timeout_s`
  bool too_big = false;        // killed when its resident memory passed `max_rss_bytes`
  std::string output;          // stdout and stderr interleaved, the last `max_output` bytes
  uint64_t max_rss_bytes = 0;  // the child's peak resident memory (as far as it got)
  bool Succeeded() const { return !timed_out && !too_big && signal == 0 && exit_code == 0; }
  // "exit code 3", "signal 11 (Segmentation fault)", "no answer within the time limit"; and the
  // last line of output when there is one.
  std::string Describe() const;
};

// Starts argv[0] (a path, not searched in PATH) with stdin from /dev/null, waits at most
// `timeout_s` seconds, then kills it; with `max_rss_bytes`, kills it too when its resident memory
// passes that (checked every 20 ms). Only spawning can fail; anything the child does is reported
// in the outcome. Safe to call from many threads (posix_spawn; descriptors are close-on-exec).
Result<ChildOutcome> RunChild(const std::vector<std::string>& argv, double timeout_s,
                              uint64_t max_rss_bytes = 0, size_t max_output = 64 << 10);

}  // namespace omicsfs
