// omicsfs: options → command (mount / ls / cat). Exit codes: 0 ok, 1 usage, 2 SOURCE unusable,
// 3 mount failed.
#include <cstdio>

#include "mount/commands.h"
#include "mount/options.h"
#include "util/log.h"

int main(int argc, char** argv) {
  using namespace omicsfs::mount;
  auto options = ParseOptions(argc, argv);
  if (!options.ok()) {
    std::fprintf(stderr, "omicsfs: %s\n\n%s", options.status().message().c_str(), UsageText());
    return kExitUsage;
  }
  if (options->debug) omicsfs::SetLogLevel(omicsfs::LogLevel::kDebug);
  switch (options->command) {
    case Command::kHelp:
      std::fputs(UsageText(), stdout);
      return kExitOk;
    case Command::kVersion:
      std::printf("omicsfs %s\n", OMICSFS_VERSION);
      return kExitOk;
    case Command::kLs:
      return RunLs(*options);
    case Command::kCat:
      return RunCat(*options);
    case Command::kMount:
      return RunMount(*options, argv[0]);
  }
  return kExitUsage;
}
