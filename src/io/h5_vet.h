// Probing and vetting an HDF5 file before the daemon lets libhdf5 parse it.
//
// libhdf5 (1.10.8, Debian's) is not memory-safe on damaged files: it trusts sizes stored in the
// file (docs/robustness.md). A crash inside it would take every mounted file down, so before the
// daemon opens an HDF5 file, a helper process (omicsfs-h5vet) parses it first, in two steps:
// - the probe: it walks the file's groups and reads their string attributes (bounded: H5Bounds),
//   and prints that report at once. HDF5 store kinds (vfs/kinds/) match on it (a BPCells group's
//   `version`, AnnData's root `encoding-type`); the daemon never reads an attribute itself:
//   libhdf5 follows an attribute's global-heap reference unchecked (docs/robustness.md);
// - the vetting: it makes every other libhdf5 call the daemon may make on the reported groups: it
//   opens each group the kinds may open as a store (H5Vetter::store_marks), reads the type and
//   length of each dataset in it, reads every string dataset, and reads every numeric dataset whole
//   up to a budget (beyond it: both ends of each dataset and its chunk index).
// Only when the helper finishes, within its time and memory limits, does the daemon parse the file
// itself. A file it could not probe is refused (a folder with ERROR.txt); a file it probed but
// could not vet is refused by the kinds that recognise it, and passed through by the others.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/h5_array_store.h"
#include "util/status.h"

namespace omicsfs::io {

struct H5Vetter {
  std::string helper;     // path of omicsfs-h5vet; empty: files are parsed in-process unvetted
  double timeout_s = 60;  // a helper that takes longer is killed and the file refused
  uint64_t full_read_bytes = uint64_t{256} << 20;  // numeric data read whole up to this much
  // A file whose parsing made the helper this large is refused too: the daemon would need the
  // same memory (damaged dimensions make libhdf5 allocate gigabytes).
  uint64_t max_rss_bytes = uint64_t{1} << 30;
  // Flags that let the helper read remote files as the daemon does (io/remote: endpoint, region,
  // anonymous, CA file, timeouts, retries; RemoteHelperArgs). Never credentials: the helper
  // inherits the daemon's environment and reads them as the daemon did.
  std::vector<std::string> remote_args;
  // The groups vetted in depth: those with a string attribute of one of these names (the HDF5
  // kinds declare them: StoreKind::Hdf5StoreMarks; BPCells' `version`). The other groups are
  // probed only: a file no kind opens (an .h5ad passed through) costs a walk of its groups.
  std::vector<std::string> store_marks;
  bool enabled() const { return !helper.empty(); }
};

// How much a probe reports. A file with a million groups (h5py writes whatever it is given) must
// not make a report of gigabytes: the walk over the file stops at `groups`, and attributes past
// the other bounds are left out; the report then says it was cut. Defaults: 10,000 groups (a
// BPCells file holds a few; an AnnData file tens to hundreds), 64 string attributes a group, 1,024
// strings an attribute, and 1 MiB of names and values in all (2 MiB of the helper's hex output,
// well inside what the daemon keeps of it).
struct H5Bounds {
  size_t groups = 10000;
  size_t attributes = 64;
  size_t values = 1024;
  size_t bytes = size_t{1} << 20;
};

struct H5Attribute {
  std::string name;
  std::vector<std::string> values;  // a scalar attribute holds one
};

struct H5Group {
  std::string path;                     // absolute, "/" for the root
  std::vector<H5Attribute> attributes;  // its string attributes, in name order
  // The value of its string attribute `name` when that holds exactly one string; else nullptr.
  const std::string* Attribute(std::string_view name) const;
};

// What a probe found: the groups (the root first, then every group below it in name order) with
// their string attributes.
struct H5Probe {
  std::vector<H5Group> groups;
  bool cut = false;  // a bound was reached: groups or attributes past it are not listed
  // OK when the helper got through every read after the probe too (or vetting is disabled); else
  // why not. A kind that recognises the file shows this as its ERROR.txt.
  Status vetted;
  const H5Group* Root() const { return groups.empty() ? nullptr : &groups.front(); }
};

// Runs the helper on `path` and returns its probe. An error when the helper could not probe the
// file (it could not be opened as HDF5; a crash, time or memory limit before the report; the
// message says how it ended) or the report is unreadable; clean libhdf5 errors do not fail it
// (the daemon meets them itself). With vetting disabled, the file is probed in this process.
Result<H5Probe> ProbeHdf5File(const H5Vetter& vetter, const std::string& path,
                              const H5Bounds& bounds = {});
// The same for any ByteSource: a local file by its path; any other through its URL
// (source->Describe()), which the helper opens itself, with vetter.remote_args. With vetting
// disabled, `source` is probed in this process.
Result<H5Probe> ProbeHdf5File(const H5Vetter& vetter,
                              const std::shared_ptr<const ByteSource>& source,
                              const H5Bounds& bounds = {});

// Whether `source` carries the HDF5 signature (IsHdf5Source); a local file read through one
// descriptor of its own (a walk sniffs every local file it has not seen).
Result<bool> HasHdf5Signature(const ByteSource& source);

// One group of a probed file as an array store, with `version` as the probe read it (so the
// daemon never reads that attribute): a local file through libhdf5's POSIX driver and the
// source's change guard, any other through the ByteSource driver.
Result<std::unique_ptr<H5ArrayStore>> OpenHdf5Group(const std::shared_ptr<const ByteSource>& source,
                                                    const std::string& group,
                                                    std::optional<std::string> version);

// The helper's two steps, in the calling process. ProbeHdf5InProcess fails only when the file
// cannot be opened at all. VetHdf5InProcess makes every libhdf5 call the daemon may make on the
// probed groups marked by one of `marks`; clean errors are collected in `notes` (one per line),
// not returned.
Status ProbeHdf5InProcess(const std::string& path, const H5Bounds& bounds, H5Probe* probe);
Status ProbeHdf5InProcess(const std::shared_ptr<const ByteSource>& source, const H5Bounds& bounds,
                          H5Probe* probe);
void VetHdf5InProcess(const std::string& path, const H5Probe& probe,
                      const std::vector<std::string>& marks, uint64_t full_read_bytes,
                      std::string* notes);
void VetHdf5InProcess(const std::shared_ptr<const ByteSource>& source, const H5Probe& probe,
                      const std::vector<std::string>& marks, uint64_t full_read_bytes,
                      std::string* notes);

// The helper prints its probe first, in this form (hex-encoded, so names cannot forge it), before
// it vets the file: a helper that dies while vetting leaves its probe behind. The daemon parses
// the first report in the helper's output; the notes follow it.
// `error`: the file could not be opened at all (truncated, not HDF5 inside): the daemon shows it
// as a store folder with ERROR.txt giving this reason.
struct VetReport {
  // `vetted` is not part of the report: the daemon knows it from how the helper ended.
  H5Probe probe;
  std::string error;
};
std::string FormatVetReport(const VetReport& report);
// The report and, in `rest` (optional), the output after it.
Result<VetReport> ParseVetReport(std::string_view output, std::string_view* rest = nullptr);

}  // namespace omicsfs::io
