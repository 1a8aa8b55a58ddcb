// omicsfs-h5vet [--budget BYTES] FILE: makes every libhdf5 call the daemon would make on FILE
// (io/h5_vet.h). Exit code 0 when it got through, whatever clean errors libhdf5 reported (they
// are printed), with its report of the store groups last; 1 usage. A crash or hang in libhdf5
// ends it otherwise, and the daemon then never parses FILE itself.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/h5_vet.h"

int main(int argc, char** argv) {
  // A helper stuck in libhdf5 must not outlive the daemon that started it (its time limit is
  // enforced by the daemon, which kills it; a daemon killed first would leave it spinning).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;  // the parent is already gone
  uint64_t budget = uint64_t{256} << 20;
  int i = 1;
  if (argc == 4 && std::strcmp(argv[1], "--budget") == 0) {
    budget = std::strtoull(argv[2], nullptr, 10);
    i = 3;
  }
  if (argc != i + 1) {
    std::fprintf(stderr, "usage: omicsfs-h5vet [--budget BYTES] FILE\n");
    return 1;
  }
  std::string notes;
  omicsfs::io::VetReport report;
  omicsfs::Status st = omicsfs::io::VetHdf5InProcess(argv[i], budget, &notes, &report.stores);
  std::fputs(notes.c_str(), stdout);
  if (!st.ok()) report.error = st.message();
  std::fputs(omicsfs::io::FormatVetReport(report).c_str(), stdout);  // last: the daemon reads it
  std::fflush(stdout);
  // No exit handlers: libhdf5 leaks on the error paths of damaged files, and a leak report would
  // turn a file the daemon can parse safely into a refused one in sanitizer builds.
  _exit(0);
}
