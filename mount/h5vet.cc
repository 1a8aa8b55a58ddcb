// omicsfs-h5vet [--budget BYTES] [--vet-groups-with ATTRIBUTE]... [REMOTE FLAGS] FILE: makes
// every libhdf5 call the daemon would make on FILE (io/h5_vet.h). FILE may be a URL (s3://,
// http://, https://): then it is read as the daemon reads it, through the ByteSource driver and a
// block cache of its own, with the REMOTE FLAGS the daemon passes (io/remote: RemoteHelperArgs;
// credentials from the environment). It prints its probe of FILE's groups and their string
// attributes first, then vets the groups with one of the ATTRIBUTEs (the kinds' store groups).
// Exit code 0 when it got through, whatever clean errors libhdf5 reported (printed after the
// probe); 1 usage. A crash or hang in libhdf5 ends it otherwise, and the daemon then never parses
// FILE itself.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache_pool.h"
#include "io/h5_vet.h"
#include "io/remote/remote.h"

namespace {

int Usage(const std::string& why) {
  std::fprintf(
      stderr,
      "omicsfs-h5vet: %s\nusage: omicsfs-h5vet [--budget BYTES] [--vet-groups-with ATTRIBUTE]... "
      "[REMOTE FLAGS] FILE\n",
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
  std::vector<std::string> marks;  // the groups vetted in depth: those with one of these attributes
  io::RemoteOptions remote;
  size_t i = 0;
  while (i + 1 < args.size()) {
    if (args[i] == "--budget") {
      budget = std::strtoull(args[i + 1].c_str(), nullptr, 10);
      i += 2;
      continue;
    }
    if (args[i] == "--vet-groups-with") {
      marks.push_back(args[i + 1]);
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
  std::shared_ptr<const io::ByteSource> source;
  if (io::IsRemoteUrl(file)) {
    // Why 64 MiB: the helper reads numeric data in 2^20-element blocks (up to 8 MiB) and its
    // metadata again and again; the pool only has to hold a block's neighbourhood.
    static omicsfs::cache::CachePool pool(uint64_t{64} << 20);
    remote.pool = &pool;
    auto opened = io::OpenRemoteObject(file, remote);
    if (opened.ok()) source = *opened;
    st = opened.ok() ? io::ProbeHdf5InProcess(source, io::H5Bounds{}, &report.probe)
                     : opened.status();
  } else {
    st = io::ProbeHdf5InProcess(file, io::H5Bounds{}, &report.probe);
  }
  if (!st.ok()) report.error = st.message();
  // The probe first, at once: if libhdf5 dies in what follows, the daemon still knows what the
  // file holds, and only the kinds that recognise it refuse it.
  std::fputs(io::FormatVetReport(report).c_str(), stdout);
  std::fflush(stdout);
  if (st.ok()) {
    if (source != nullptr) {
      io::VetHdf5InProcess(source, report.probe, marks, budget, &notes);
    } else {
      io::VetHdf5InProcess(file, report.probe, marks, budget, &notes);
    }
  }
  // Bounded, so that the report before them stays inside what the daemon keeps of the output.
  if (notes.size() > (64 << 10)) notes.resize(64 << 10);
  std::fputs(notes.c_str(), stdout);
  std::fflush(stdout);
  // No exit handlers: libhdf5 leaks on the error paths of damaged files, and a leak report would
  // turn a file the daemon can parse safely into a refused one in sanitizer builds.
  _exit(0);
}
