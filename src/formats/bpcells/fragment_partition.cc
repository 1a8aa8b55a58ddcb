#include "formats/bpcells/fragment_partition.h"

#include "cache/cache_pool.h"

namespace omicsfs::formats::bpcells {

namespace {
constexpr uint64_t kRecord = 3 * sizeof(uint32_t);  // start, end, cell
}  // namespace

FragmentPartition::FragmentPartition(std::shared_ptr<const Fragments> base,
                                     std::vector<std::pair<uint64_t, uint64_t>> chunks,
                                     std::vector<int32_t> group_of_cell, size_t groups,
                                     std::vector<std::string> scratch_dirs)
    : base_(std::move(base)),
      chunks_(std::move(chunks)),
      group_of_cell_(std::move(group_of_cell)),
      groups_(groups),
      scratch_dirs_(std::move(scratch_dirs)) {}

Status FragmentPartition::Build() const {
  cache::CachePool::NotReads not_reads;  // a pass over the whole store, not a reader's reads
  ASSIGN_OR_RETURN(ScratchFile file, ScratchFile::Create(scratch_dirs_));
  std::vector<uint64_t> first;
  first.reserve(chunks_.size() * groups_ + 1);
  uint64_t at = 0;
  FragmentRange f;
  std::vector<std::vector<uint32_t>> parts(groups_);
  for (const auto& [b, e] : chunks_) {
    RETURN_IF_ERROR(base_->Read(b, e, &f));
    for (auto& p : parts) p.clear();
    for (size_t i = 0; i < f.start.size(); ++i) {
      const int32_t g = f.cell[i] < group_of_cell_.size() ? group_of_cell_[f.cell[i]] : -1;
      if (g < 0) continue;
      parts[g].insert(parts[g].end(), {f.start[i], f.end[i], f.cell[i]});
    }
    for (const auto& p : parts) {
      first.push_back(at);
      if (!p.empty())
        RETURN_IF_ERROR(file.WriteAt(at * kRecord, p.data(), p.size() * sizeof(uint32_t)));
      at += p.size() / 3;
    }
  }
  first.push_back(at);
  file_ = std::move(file);
  first_ = std::move(first);
  built_ = true;
  return OkStatus();
}

Status FragmentPartition::Read(size_t group, uint64_t k, FragmentRange* out) const {
  {
    std::lock_guard<std::mutex> lock(mu_);  // the first caller builds; the others wait for it
    if (!built_) RETURN_IF_ERROR(Build());
  }
  if (group >= groups_ || k >= chunks_.size())
    return InternalError(base_->Describe() + ": no such group or chunk");
  const size_t slot = k * groups_ + group;
  const uint64_t n = first_[slot + 1] - first_[slot];
  std::vector<uint32_t> records(3 * n);
  if (n > 0)
    RETURN_IF_ERROR(file_->file().ReadExact(first_[slot] * kRecord, records.data(), n * kRecord));
  out->start.resize(n);
  out->end.resize(n);
  out->cell.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    out->start[i] = records[3 * i];
    out->end[i] = records[3 * i + 1];
    out->cell[i] = records[3 * i + 2];
  }
  return OkStatus();
}

}  // namespace omicsfs::formats::bpcells
