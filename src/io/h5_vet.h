// Vetting an HDF5 file before the daemon lets libhdf5 parse it.
//
// libhdf5 (1.10.8, Debian's) is not memory-safe on damaged files: it trusts sizes stored in the
// file (docs/robustness.md). A crash inside it would take every mounted file down, so before the
// daemon opens an HDF5 file, a helper process (omicsfs-h5vet) makes every libhdf5 call the daemon
// will make on it: it lists the store groups, opens each, reads its version and the type and
// length of each dataset, reads every string dataset, and reads every numeric dataset whole up to
// a budget (beyond it: both ends of each dataset and its chunk index). Only when the helper
// finishes, within its time and memory limits, does the daemon parse the file itself; otherwise
// the file is shown as a plain file, with a log line saying why.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/h5_array_store.h"
#include "util/status.h"

namespace omicsfs::io {

struct H5Vetter {
  std::string helper;          // path of omicsfs-h5vet; empty: files are parsed in-process unvetted
  double timeout_s = 60;       // a helper that takes longer is killed and the file refused
  uint64_t full_read_bytes = uint64_t{256} << 20;  // numeric data read whole up to this much
  // A file whose parsing made the helper this large is refused too: the daemon would need the
  // same memory (damaged dimensions make libhdf5 allocate gigabytes).
  uint64_t max_rss_bytes = uint64_t{1} << 30;
  // Flags that let the helper read remote files as the daemon does (io/remote: endpoint, region,
  // anonymous, CA file, timeouts, retries; RemoteHelperArgs). Never credentials: the helper
  // inherits the daemon's environment and reads them as the daemon did.
  std::vector<std::string> remote_args;
  bool enabled() const { return !helper.empty(); }
};

// Runs the helper on `path` and returns the store groups it found: every group with a string
// `version` attribute, and that attribute's value, as the helper read them. The daemon takes the
// versions from this report and never reads the attributes itself: libhdf5 follows an attribute's
// global-heap reference unchecked (docs/robustness.md), so only the helper runs that risk. An error
// when the helper did not finish (crash, time or memory limit; the message says how it ended) or
// its report is unreadable; clean libhdf5 errors do not fail it (the daemon meets them itself).
// With vetting disabled, the groups are listed in this process.
Result<std::vector<H5GroupAttribute>> VetHdf5File(const H5Vetter& vetter, const std::string& path);
// The same for a remote object: the helper opens its URL (source->Describe()) itself, with
// vetter.remote_args; with vetting disabled, `source` is listed in this process.
Result<std::vector<H5GroupAttribute>> VetHdf5File(const H5Vetter& vetter,
                                                  const std::shared_ptr<const ByteSource>& source);

// The helper's work, in the calling process: every libhdf5 call the daemon makes on the file.
// The store groups go to `stores`; clean errors are collected in `notes` (one per line), not
// returned; only a failure to open the file at all is an error.
Status VetHdf5InProcess(const std::string& path, uint64_t full_read_bytes, std::string* notes,
                        std::vector<H5GroupAttribute>* stores);
// The same over a ByteSource (the helper, given a URL).
Status VetHdf5InProcess(const std::shared_ptr<const ByteSource>& source, uint64_t full_read_bytes,
                        std::string* notes, std::vector<H5GroupAttribute>* stores);

// The helper prints its store groups last, after its notes, in this form (hex-encoded, so names
// cannot forge it); the daemon parses the last report in the helper's output.
// `error`: the file could not be opened at all (truncated, not HDF5 inside): the daemon shows it
// as a store folder with ERROR.txt giving this reason.
struct VetReport {
  std::vector<H5GroupAttribute> stores;
  std::string error;
};
std::string FormatVetReport(const VetReport& report);
Result<VetReport> ParseVetReport(std::string_view output);

}  // namespace omicsfs::io
