#include "io/h5_vet.h"

#include <hdf5.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "io/h5_array_store.h"
#include "io/h5_handle.h"
#include "util/subprocess.h"

namespace omicsfs::io {
namespace {

constexpr uint64_t kBlockElems = uint64_t{1} << 20;  // numeric reads, like the formats' ranges
constexpr uint64_t kEndElems = uint64_t{1} << 16;    // beyond the budget: this much at each end

// The file being vetted: a local path, or a ByteSource read through the driver (io/h5_vfd.h).
struct Target {
  std::string path;
  std::shared_ptr<const ByteSource> source;

  Result<h5::Handle> Open() const { return source ? h5::OpenFile(source) : h5::OpenFile(path); }
  Result<std::vector<H5GroupAttribute>> Groups() const {
    return source ? ListGroupsWithStringAttribute(source, "version") : ListGroupsWithStringAttribute(path, "version");
  }
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
  if (!plist.valid() || H5Pget_layout(plist.get()) != H5D_CHUNKED) return (void)h5::TakeErrorStack();
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

void ReadNumeric(const H5ArrayStore& store, const std::string& name, const ArrayInfo& info, bool whole,
                 std::string* notes) {
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

}  // namespace

namespace {

Status VetTarget(const Target& target, uint64_t full_read_bytes, std::string* notes,
                 std::vector<H5GroupAttribute>* stores) {
  auto groups = target.Groups();
  if (!groups.ok()) return groups.status();
  *stores = *groups;
  uint64_t budget = full_read_bytes;
  for (const auto& g : *groups) {
    auto store = target.Store(g.group);
    if (!store.ok()) {
      *notes += store.status().message() + "\n";
      continue;
    }
    const H5ArrayStore& s = **store;
    if (auto v = s.Version(); !v.ok()) *notes += v.status().message() + "\n";
    auto names = s.DatasetNames();
    if (!names.ok()) {
      *notes += names.status().message() + "\n";
      continue;
    }
    for (const std::string& name : *names) {
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
      if (!whole) WalkChunkIndex(target, g.group == "/" ? "/" + name : g.group + "/" + name, notes);
      if (a.length > 0) ReadNumeric(s, name, a, whole, notes);
    }
  }
  return OkStatus();
}

}  // namespace

Status VetHdf5InProcess(const std::string& path, uint64_t full_read_bytes, std::string* notes,
                        std::vector<H5GroupAttribute>* stores) {
  return VetTarget(Target{path, nullptr}, full_read_bytes, notes, stores);
}

Status VetHdf5InProcess(const std::shared_ptr<const ByteSource>& source, uint64_t full_read_bytes,
                        std::string* notes, std::vector<H5GroupAttribute>* stores) {
  return VetTarget(Target{source->Describe(), source}, full_read_bytes, notes, stores);
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
  for (const auto& g : report.stores) out += "store " + Hex(g.group) + " " + Hex(g.value) + "\n";
  return out + "end " + std::to_string(report.stores.size()) + "\n";
}

Result<VetReport> ParseVetReport(std::string_view output) {
  size_t at = output.rfind(kReportHeader);
  while (at != std::string_view::npos && at != 0 && output[at - 1] != '\n') {
    at = at == 0 ? std::string_view::npos : output.rfind(kReportHeader, at - 1);
  }
  if (at == std::string_view::npos) return CorruptError("no report");
  std::string_view rest = output.substr(at + kReportHeader.size());
  VetReport report;
  std::vector<H5GroupAttribute>& stores = report.stores;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return CorruptError("report cut short");
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (line.starts_with("end ")) {
      if (!rest.empty() || line.substr(4) != std::to_string(stores.size())) return CorruptError("report miscounted");
      return report;
    }
    if (line.starts_with("error ") && report.error.empty() && stores.empty()) {
      auto error = Unhex(line.substr(6));
      if (!error || error->empty()) return CorruptError("report line unreadable");
      report.error = std::move(*error);
      continue;
    }
    const size_t space = line.find(' ', 6);
    if (!line.starts_with("store ") || space == std::string_view::npos) return CorruptError("report line unreadable");
    auto group = Unhex(line.substr(6, space - 6));
    auto value = Unhex(line.substr(space + 1));
    if (!group || !value || group->empty() || (*group)[0] != '/') return CorruptError("report line unreadable");
    stores.push_back({std::move(*group), std::move(*value)});
  }
  return CorruptError("report cut short");
}

namespace {

// Runs the helper on `path` (a local path or a URL; `extra` flags before it).
Result<std::vector<H5GroupAttribute>> RunHelper(const H5Vetter& vetter, const std::vector<std::string>& extra,
                                                const std::string& path) {
  std::vector<std::string> argv = {vetter.helper, "--budget", std::to_string(vetter.full_read_bytes)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(path);
  auto outcome = RunChild(argv, vetter.timeout_s, vetter.max_rss_bytes, size_t{8} << 20);
  if (!outcome.ok()) return outcome.status();
  if (outcome->Succeeded()) {
    auto report = ParseVetReport(outcome->output);
    if (!report.ok()) {
      return CorruptError(path + ": not opened: the report of " + vetter.helper + " is unreadable (" +
                          report.status().message() + ")");
    }
    if (!report->error.empty()) return CorruptError(report->error);
    return std::move(report->stores);
  }
  if (outcome->too_big) {
    return CorruptError(path + ": not opened: libhdf5 needed more than " + std::to_string(vetter.max_rss_bytes >> 20) +
                        " MiB of memory to parse it in a separate process");
  }
  return CorruptError(path + ": not opened: libhdf5 did not survive parsing it in a separate process (" +
                      vetter.helper + ": " + outcome->Describe() + ")");
}

}  // namespace

Result<std::vector<H5GroupAttribute>> VetHdf5File(const H5Vetter& vetter, const std::string& path) {
  if (!vetter.enabled()) return ListGroupsWithStringAttribute(path, "version");
  return RunHelper(vetter, {}, path);
}

Result<std::vector<H5GroupAttribute>> VetHdf5File(const H5Vetter& vetter,
                                                  const std::shared_ptr<const ByteSource>& source) {
  if (!vetter.enabled()) return ListGroupsWithStringAttribute(source, "version");
  return RunHelper(vetter, vetter.remote_args, source->Describe());
}

}  // namespace omicsfs::io
