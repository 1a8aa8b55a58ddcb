// omicsfs-h5vet [--budget BYTES] [REMOTE FLAGS] FILE: makes every libhdf5 call the daemon would
// make on FILE (io/h5_vet.h). FILE may be a URL (s3://, http://, https://): then it is read as
// the daemon reads it, through the ByteSource driver and a block cache of its own, with the
// REMOTE FLAGS the daemon passes (io/remote: RemoteHelperArgs; credentials from the environment).
// Exit code 0 when it got through, whatever clean errors libhdf5 reported (they are printed),
// with its report of the store groups last; 1 usage. A crash or hang in libhdf5 ends it
// otherwise, and the daemon then never parses FILE itself.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cache/cache_pool.h"
#include "io/h5_vet.h"
#include "io/remote/remote.h"

namespace {

int Usage(const std::string& why) {
  std::fprintf(stderr, "omicsfs-h5vet: %s\nusage: omicsfs-h5vet [--budget BYTES] [REMOTE FLAGS] FILE\n",
               why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // A helper stuck in libhdf5 must not outlive the daemon that started it (its time limit is
  // enforced by the daemon, which kills it; a daemon killed first would leave it spinning).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;  // the parent is already gone
  namespace io = omicsfs::io;
  const std::vector<std::string> args(argv + 1, argv + argc);
  uint64_t budget = uint64_t{256} << 20;
  io::RemoteOptions remote;
  size_t i = 0;
  while (i + 1 < args.size()) {
    if (args[i] == "--budget") {
      budget = std::strtoull(args[i + 1].c_str(), nullptr, 10);
      i += 2;
      continue;
    }
    auto used = io::ParseRemoteHelperArg(args, i, &remote);
    if (!used.ok()) return Usage(used.status().message());
    if (*used == 0) return Usage("unknown flag " + args[i]);
    i += *used;
  }
  if (i + 1 != args.size()) return Usage("one FILE expected");
  const std::string& file = args[i];
  std::string notes;
  io::VetReport report;
  omicsfs::Status st;
  if (io::IsRemoteUrl(file)) {
    // Why 64 MiB: the helper reads numeric data in 2^20-element blocks (up to 8 MiB) and its
    // metadata again and again; the pool only has to hold a block's neighbourhood.
    static omicsfs::cache::CachePool pool(uint64_t{64} << 20);
    remote.pool = &pool;
    auto source = io::OpenRemoteObject(file, remote);
    st = source.ok() ? io::VetHdf5InProcess(*source, budget, &notes, &report.stores) : source.status();
  } else {
    st = io::VetHdf5InProcess(file, budget, &notes, &report.stores);
  }
  std::fputs(notes.c_str(), stdout);
  if (!st.ok()) report.error = st.message();
  std::fputs(io::FormatVetReport(report).c_str(), stdout);  // last: the daemon reads it
  std::fflush(stdout);
  // No exit handlers: libhdf5 leaks on the error paths of damaged files, and a leak report would
  // turn a file the daemon can parse safely into a refused one in sanitizer builds.
  _exit(0);
}
