#include "io/h5_vet.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "io/h5_array_store.h"
#include "io/h5_handle.h"
#include "io/local/local_space.h"
#include "util/subprocess.h"

namespace omicsfs::io {
namespace {

constexpr uint64_t kBlockElems = uint64_t{1} << 20;  // numeric reads, like the formats' ranges
constexpr uint64_t kEndElems = uint64_t{1} << 16;    // beyond the budget: this much at each end

// The file being probed or vetted: a local path, or a ByteSource read through the driver
// (io/h5_vfd.h).
struct Target {
  std::string path;
  std::shared_ptr<const ByteSource> source;

  Result<h5::Handle> Open() const { return source ? h5::OpenFile(source) : h5::OpenFile(path); }
  Result<std::unique_ptr<H5ArrayStore>> Store(const std::string& group) const {
    return source ? H5ArrayStore::Open(source, group) : H5ArrayStore::Open(path, group);
  }
};

// Walks the chunk index (B-tree) of a chunked dataset: offsets and sizes of every chunk.
void WalkChunkIndex(const Target& target, const std::string& dataset, std::string* notes) {
  auto opened = target.Open();
  if (!opened.ok()) return;
  const h5::Handle& f = *opened;
  h5::Handle ds = h5::DatasetHandle(H5Dopen2(f.get(), dataset.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return (void)h5::TakeErrorStack();
  h5::Handle plist = h5::PlistHandle(H5Dget_create_plist(ds.get()));
  if (!plist.valid() || H5Pget_layout(plist.get()) != H5D_CHUNKED)
    return (void)h5::TakeErrorStack();
  h5::Handle space = h5::DataspaceHandle(H5Dget_space(ds.get()));
  hsize_t n = 0;
  if (!space.valid() || H5Dget_num_chunks(ds.get(), space.get(), &n) < 0) {
    *notes += dataset + ": chunk count: " + h5::TakeErrorStack() + "\n";
    return;
  }
  for (hsize_t i = 0; i < n; ++i) {
    hsize_t offset[H5S_MAX_RANK];
    unsigned mask = 0;
    haddr_t addr = 0;
    hsize_t size = 0;
    if (H5Dget_chunk_info(ds.get(), space.get(), i, offset, &mask, &addr, &size) < 0) {
      *notes += dataset + ": chunk " + std::to_string(i) + ": " + h5::TakeErrorStack() + "\n";
      return;
    }
  }
}

void ReadNumeric(const H5ArrayStore& store, const std::string& name, const ArrayInfo& info,
                 bool whole, std::string* notes) {
  std::vector<uint64_t> buf(std::min(info.length, whole ? kBlockElems : kEndElems));
  auto read = [&](uint64_t first, uint64_t count) {
    Status st = store.Read(name, info.type, first, count, buf.data());
    if (!st.ok()) *notes += st.message() + "\n";
    return st.ok();
  };
  if (whole) {
    for (uint64_t first = 0; first < info.length; first += kBlockElems) {
      if (!read(first, std::min(kBlockElems, info.length - first))) return;
    }
    return;
  }
  if (read(0, buf.size())) read(info.length - buf.size(), buf.size());
}

// The numbers of datasets the array store's Info does not take (AnnData's: signed integers, bool,
// 8- and 16-bit ones, 2-D X), read as the daemon reads them (ReadNumbers, whole rows): whole
// within the budget, else the first and last rows. True when the dataset was such a one.
bool VetOtherNumbers(const Target& target, const H5ArrayStore& store, const std::string& group,
                     const std::string& name, uint64_t* budget, std::string* notes) {
  auto d = store.DescribeDataset(name);
  if (!d.ok() || !d->has_value() || !(*d)->number || (*d)->dims.empty()) return false;
  const H5DatasetDesc& desc = **d;
  const H5Number t = *desc.number;
  const bool plain = desc.dims.size() == 1 && (t == H5Number::kUInt32 || t == H5Number::kUInt64 ||
                                               t == H5Number::kFloat32 || t == H5Number::kFloat64);
  if (plain) return false;
  if (!desc.missing_filter.empty()) {
    *notes += store.Describe() + ": dataset '" + name + "': " + desc.missing_filter +
              " is not available\n";
    return true;
  }
  uint64_t row = 1;
  for (size_t i = 1; i < desc.dims.size(); ++i) row *= desc.dims[i];
  const uint64_t elem = H5NumberSize(t);
  if (row == 0 || row > (uint64_t{1} << 28) / elem) return true;
  const uint64_t rows = desc.dims[0];
  const bool whole = rows <= *budget / (row * elem);
  if (whole) *budget -= rows * row * elem;
  if (!whole) WalkChunkIndex(target, group == "/" ? "/" + name : group + "/" + name, notes);
  const uint64_t step = std::max<uint64_t>(1, (whole ? kBlockElems : kEndElems) / row);
  std::vector<char> buf(std::min(rows, step) * row * elem);
  auto read = [&](uint64_t r0, uint64_t n) {
    Status st = store.ReadNumbers(name, t, r0 * row, n * row, buf.data());
    if (!st.ok()) *notes += st.message() + "\n";
    return st.ok();
  };
  if (whole) {
    for (uint64_t r = 0; r < rows; r += step) {
      if (!read(r, std::min(step, rows - r))) break;
    }
  } else if (rows > 0 && read(0, std::min(step, rows))) {
    read(rows - std::min(step, rows), std::min(step, rows));
  }
  return true;
}

}  // namespace

namespace {

// The probe's walk: every group (H5Ovisit visits the root first, then in name order) and its
// string attributes, within the bounds.
struct ProbeWalk {
  const H5Bounds* bounds;
  H5Probe* probe;
  size_t bytes = 0;  // names and values reported so far

  bool Fits(size_t more) {
    if (bytes + more > bounds->bytes) return false;
    bytes += more;
    return true;
  }
  // One attribute of the group being reported (`loc`): kept when it is a string attribute within
  // the bounds; clean libhdf5 errors leave it out.
  void Attribute(hid_t loc, const char* name) {
    H5Group& g = probe->groups.back();
    h5::Handle attr = h5::AttributeHandle(H5Aopen(loc, name, H5P_DEFAULT));
    if (!attr.valid()) return (void)h5::TakeErrorStack();
    h5::Handle type = h5::TypeHandle(H5Aget_type(attr.get()));
    if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) return (void)h5::TakeErrorStack();
    h5::Handle space = h5::DataspaceHandle(H5Aget_space(attr.get()));
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (n < 0) return (void)h5::TakeErrorStack();
    // Fixed-length strings take their stored size: a width of 1 MiB times 1,024 values is not read.
    const bool wide = H5Tis_variable_str(type.get()) <= 0 &&
                      H5Aget_storage_size(attr.get()) > bounds->bytes - bytes;
    if (g.attributes.size() >= bounds->attributes || static_cast<uint64_t>(n) > bounds->values ||
        wide) {
      h5::TakeErrorStack();
      probe->cut = true;
      return;
    }
    auto values = h5::ReadStringValues(attr.get(), true, name);
    if (!values.ok()) return;
    size_t size = std::strlen(name);
    for (const auto& v : *values) size += v.size();
    if (!Fits(size)) {
      probe->cut = true;
      return;
    }
    g.attributes.push_back({name, std::move(*values)});
  }
};

Status ProbeTarget(const Target& target, const H5Bounds& bounds, H5Probe* probe) {
  ASSIGN_OR_RETURN(h5::Handle f, target.Open());
  *probe = H5Probe();
  ProbeWalk walk{&bounds, probe};
  herr_t rc = H5Ovisit2(
      f.get(), H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t obj, const char* name, const H5O_info_t* info, void* data) -> herr_t {
        auto* w = static_cast<ProbeWalk*>(data);
        if (info->type != H5O_TYPE_GROUP) return 0;
      // GCC 12 at -O3 warns that "/" + std::string&& (an insert at 0) may memcpy overlapping
      // ranges of 2^63 bytes: a false positive of its -Wrestrict through std::string (GCC bug
      // 105651), silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
        std::string path = std::strcmp(name, ".") == 0 ? "/" : "/" + std::string(name);
#pragma GCC diagnostic pop
        // Past a bound the walk stops: a file of a million groups costs no more than 10,000.
        if (w->probe->groups.size() >= w->bounds->groups || !w->Fits(path.size())) {
          w->probe->cut = true;
          return 1;
        }
        w->probe->groups.push_back({std::move(path), {}});
        h5::Handle group = h5::GroupHandle(H5Gopen2(obj, name, H5P_DEFAULT));
        if (!group.valid()) return (void)h5::TakeErrorStack(), 0;
        // The names first (at most 16 times the bound: most attributes of a group may be numeric),
        // then the string ones read.
        struct Names {
          std::vector<std::string> names;
          size_t most;
        } names{{}, 16 * w->bounds->attributes};
        hsize_t at = 0;
        const herr_t listed = H5Aiterate2(
            group.get(), H5_INDEX_NAME, H5_ITER_INC, &at,
            [](hid_t, const char* attr, const H5A_info_t*, void* out) -> herr_t {
              auto* n = static_cast<Names*>(out);
              if (n->names.size() >= n->most) return 1;
              n->names.push_back(attr);
              return 0;
            },
            &names);
        if (listed < 0) h5::TakeErrorStack();
        if (listed > 0) w->probe->cut = true;
        for (const std::string& a : names.names) w->Attribute(group.get(), a.c_str());
        return 0;
      },
      &walk, H5O_INFO_BASIC);
  if (rc < 0) return h5::Error(target.path + ": walk groups");
  return OkStatus();
}

bool Marked(const H5Group& g, const std::vector<std::string>& marks) {
  return std::any_of(g.attributes.begin(), g.attributes.end(), [&](const H5Attribute& a) {
    return std::find(marks.begin(), marks.end(), a.name) != marks.end();
  });
}

void VetTarget(const Target& target, const H5Probe& probe, const std::vector<std::string>& marks,
               uint64_t full_read_bytes, std::string* notes) {
  uint64_t budget = full_read_bytes;
  for (const H5Group& g : probe.groups) {
    if (!Marked(g, marks)) continue;
    auto store = target.Store(g.path);
    if (!store.ok()) {
      *notes += store.status().message() + "\n";
      continue;
    }
    const H5ArrayStore& s = **store;
    auto names = s.DatasetNames();
    if (!names.ok()) {
      *notes += names.status().message() + "\n";
      continue;
    }
    for (const std::string& name : *names) {
      if (VetOtherNumbers(target, s, g.path, name, &budget, notes)) continue;
      auto info = s.Info(name);
      if (!info.ok() || !info->has_value()) {
        if (!info.ok()) *notes += info.status().message() + "\n";
        continue;
      }
      const ArrayInfo& a = **info;
      if (a.type == ElemType::kString) {
        if (auto v = s.ReadStrings(name); !v.ok()) *notes += v.status().message() + "\n";
        continue;
      }
      const bool whole = a.length <= budget / ElemSize(a.type);  // no overflow on a damaged length
      if (whole) budget -= a.length * ElemSize(a.type);
      if (!whole) WalkChunkIndex(target, g.path == "/" ? "/" + name : g.path + "/" + name, notes);
      if (a.length > 0) ReadNumeric(s, name, a, whole, notes);
    }
  }
}

}  // namespace

const std::string* H5Group::Attribute(std::string_view name) const {
  for (const auto& a : attributes) {
    if (a.name == name) return a.values.size() == 1 ? &a.values[0] : nullptr;
  }
  return nullptr;
}

Status ProbeHdf5InProcess(const std::string& path, const H5Bounds& bounds, H5Probe* probe) {
  return ProbeTarget(Target{path, nullptr}, bounds, probe);
}

Status ProbeHdf5InProcess(const std::shared_ptr<const ByteSource>& source, const H5Bounds& bounds,
                          H5Probe* probe) {
  return ProbeTarget(Target{source->Describe(), source}, bounds, probe);
}

void VetHdf5InProcess(const std::string& path, const H5Probe& probe,
                      const std::vector<std::string>& marks, uint64_t full_read_bytes,
                      std::string* notes) {
  VetTarget(Target{path, nullptr}, probe, marks, full_read_bytes, notes);
}

void VetHdf5InProcess(const std::shared_ptr<const ByteSource>& source, const H5Probe& probe,
                      const std::vector<std::string>& marks, uint64_t full_read_bytes,
                      std::string* notes) {
  VetTarget(Target{source->Describe(), source}, probe, marks, full_read_bytes, notes);
}

namespace {

constexpr std::string_view kReportHeader = "omicsfs-h5vet report\n";

std::string Hex(std::string_view s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::optional<std::string> Unhex(std::string_view s) {
  if (s.size() % 2 != 0) return std::nullopt;
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = digit(s[i]), lo = digit(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace

std::string FormatVetReport(const VetReport& report) {
  std::string out(kReportHeader);
  if (!report.error.empty()) out += "error " + Hex(report.error) + "\n";
  if (report.probe.cut) out += "cut\n";
  for (const H5Group& g : report.probe.groups) {
    out += "group " + Hex(g.path) + "\n";
    for (const H5Attribute& a : g.attributes) {
      out += "attr " + Hex(a.name);
      for (const auto& v : a.values) (out += ' ') += Hex(v);  // "" is an empty token: one space
      out += "\n";
    }
  }
  return out + "end " + std::to_string(report.probe.groups.size()) + "\n";
}

Result<VetReport> ParseVetReport(std::string_view output, std::string_view* after) {
  // The first report at the start of a line: whatever follows it (notes quoting names from the
  // file) cannot forge one before it.
  size_t at = output.find(kReportHeader);
  while (at != std::string_view::npos && at != 0 && output[at - 1] != '\n') {
    at = output.find(kReportHeader, at + 1);
  }
  if (at == std::string_view::npos) return CorruptError("no report");
  std::string_view rest = output.substr(at + kReportHeader.size());
  VetReport report;
  std::vector<H5Group>& groups = report.probe.groups;
  bool first = true;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return CorruptError("report cut short");
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    const bool was_first = first;
    first = false;
    if (line.starts_with("end ")) {
      if (line.substr(4) != std::to_string(groups.size())) return CorruptError("report miscounted");
      if (after != nullptr) *after = rest;
      return report;
    }
    if (line.starts_with("error ") && was_first) {
      auto error = Unhex(line.substr(6));
      if (!error || error->empty()) return CorruptError("report line unreadable");
      report.error = std::move(*error);
      first = true;  // "cut" may follow
      continue;
    }
    if (line == "cut" && was_first) {
      report.probe.cut = true;
      continue;
    }
    if (line.starts_with("group ")) {
      auto path = Unhex(line.substr(6));
      if (!path || path->empty() || (*path)[0] != '/')
        return CorruptError("report line unreadable");
      groups.push_back({std::move(*path), {}});
      continue;
    }
    if (!line.starts_with("attr ") || groups.empty()) return CorruptError("report line unreadable");
    std::string_view fields = line.substr(5);
    H5Attribute a;
    for (bool name = true;; name = false) {
      const size_t space = fields.find(' ');
      auto field = Unhex(fields.substr(0, space));
      if (!field || (name && field->empty())) return CorruptError("report line unreadable");
      (name ? a.name : a.values.emplace_back()) = std::move(*field);
      if (space == std::string_view::npos) break;
      fields.remove_prefix(space + 1);
    }
    groups.back().attributes.push_back(std::move(a));
  }
  return CorruptError("report cut short");
}

namespace {

// What the helper prints of its notes, at most: the report before them must stay inside what
// RunChild keeps of the output (its last 8 MiB).
constexpr size_t kMaxNotes = 64 << 10;
constexpr size_t kMaxOutput = size_t{8} << 20;

// Runs the helper on `path` (a local path or a URL; `extra` flags before it).
Result<H5Probe> RunHelper(const H5Vetter& vetter, const std::vector<std::string>& extra,
                          const std::string& path) {
  std::vector<std::string> argv = {vetter.helper, "--budget",
                                   std::to_string(vetter.full_read_bytes)};
  for (const std::string& mark : vetter.store_marks)
    argv.insert(argv.end(), {"--vet-groups-with", mark});
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(path);
  auto outcome = RunChild(argv, vetter.timeout_s, vetter.max_rss_bytes, kMaxOutput);
  if (!outcome.ok()) return outcome.status();
  std::string_view notes;
  auto report = ParseVetReport(outcome->output, &notes);
  if (report.ok() && !report->error.empty()) return CorruptError(report->error);
  if (outcome->Succeeded()) {
    if (!report.ok()) {
      return CorruptError(path + ": not opened: the report of " + vetter.helper +
                          " is unreadable (" + report.status().message() + ")");
    }
    return std::move(report->probe);
  }
  // The probe stands when the helper died vetting after it: the kinds that recognise the file
  // refuse it with this reason; to the others it stays a plain file.
  if (report.ok())
    outcome->output = std::string(notes);  // the reason quotes its last note, not the report
  Status failed =
      outcome->too_big
          ? CorruptError(path + ": not opened: libhdf5 needed more than " +
                         std::to_string(vetter.max_rss_bytes >> 20) +
                         " MiB of memory to parse it in a separate process")
          : CorruptError(
                path + ": not opened: libhdf5 did not survive parsing it in a separate process (" +
                vetter.helper + ": " + outcome->Describe() + ")");
  if (!report.ok()) return failed;
  report->probe.vetted = std::move(failed);
  return std::move(report->probe);
}

}  // namespace

Result<H5Probe> ProbeHdf5File(const H5Vetter& vetter, const std::string& path,
                              const H5Bounds& bounds) {
  if (vetter.enabled()) return RunHelper(vetter, {}, path);
  H5Probe probe;
  RETURN_IF_ERROR(ProbeHdf5InProcess(path, bounds, &probe));
  return probe;
}

Result<H5Probe> ProbeHdf5File(const H5Vetter& vetter,
                              const std::shared_ptr<const ByteSource>& source,
                              const H5Bounds& bounds) {
  if (dynamic_cast<const LocalByteSource*>(source.get()) != nullptr) {
    return ProbeHdf5File(vetter, source->Describe(), bounds);
  }
  if (vetter.enabled()) return RunHelper(vetter, vetter.remote_args, source->Describe());
  H5Probe probe;
  RETURN_IF_ERROR(ProbeHdf5InProcess(source, bounds, &probe));
  return probe;
}

Result<bool> HasHdf5Signature(const ByteSource& source) {
  if (dynamic_cast<const LocalByteSource*>(&source) != nullptr)
    return IsHdf5File(source.Describe());
  return IsHdf5Source(source);
}

Result<std::unique_ptr<H5ArrayStore>> OpenHdf5Group(const std::shared_ptr<const ByteSource>& source,
                                                    const std::string& group,
                                                    std::optional<std::string> version) {
  // Local files through libhdf5's own driver, as before sources existed: no block cache in the
  // way of its page reads, and the store's change guard checked on a descriptor of its own.
  if (const auto* local = dynamic_cast<const LocalByteSource*>(source.get())) {
    return H5ArrayStore::Open(local->Describe(), group, local->guard(), std::move(version));
  }
  return H5ArrayStore::Open(source, group, std::move(version));
}

}  // namespace omicsfs::io
