// Slices of a VCF Zarr store (Store::Slice): the root's arrays read over chosen row runs, with
// the per-sample arrays cut to the chosen samples by reading only the sample chunks that hold
// them; the parent's FORMAT column and bcftools' AC/AN recount kept alongside.
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "formats/vcz/store.h"
#include "formats/vcz/values.h"
#include "util/parallel.h"

namespace omicsfs::formats::vcz {
namespace {

using zarr::DenseBlock;

// `more` (same dtype and row shape) appended to `into`.
void Append(DenseBlock* into, DenseBlock&& more) {
  if (into->rows == 0) {
    *into = std::move(more);
    return;
  }
  if (zarr::IsString(into->dtype)) {
    std::move(more.strings.begin(), more.strings.end(), std::back_inserter(into->strings));
  } else {  // a buffer of both (a block is appended to once or twice: one per root chunk met)
    const std::string_view a = into->bytes(), b = more.bytes();
    const std::shared_ptr<const void> keep = std::move(into->owner);  // holds `a` until copied
    char* to = into->Allocate(a.size() + b.size());
    std::memcpy(to, a.data(), a.size());
    std::memcpy(to + a.size(), b.data(), b.size());
  }
  into->rows += more.rows;
}

void Append(std::optional<DenseBlock>* into, std::optional<DenseBlock>&& more) {
  if (!more) return;
  if (!*into) {
    *into = std::move(more);
    return;
  }
  Append(&**into, std::move(*more));
}

template <typename T>
void AppendVector(std::vector<T>* into, std::vector<T>&& more) {
  into->insert(into->end(), more.begin(), more.end());
}

void AppendBlock(VariantBlock* into, VariantBlock&& more) {
  into->count += more.count;
  Append(&into->contig, std::move(more.contig));
  Append(&into->position, std::move(more.position));
  Append(&into->allele, std::move(more.allele));
  Append(&into->id, std::move(more.id));
  Append(&into->length, std::move(more.length));
  Append(&into->quality, std::move(more.quality));
  Append(&into->filter, std::move(more.filter));
  Append(&into->genotype, std::move(more.genotype));
  Append(&into->phased, std::move(more.phased));
  if (into->info.size() < more.info.size()) into->info.resize(more.info.size());
  for (size_t i = 0; i < more.info.size(); ++i) Append(&into->info[i], std::move(more.info[i]));
  if (into->format.size() < more.format.size()) into->format.resize(more.format.size());
  for (size_t i = 0; i < more.format.size(); ++i)
    Append(&into->format[i], std::move(more.format[i]));
  AppendVector(&into->present, std::move(more.present));
  AppendVector(&into->allele_counts, std::move(more.allele_counts));
  AppendVector(&into->recounted, std::move(more.recounted));
}

// Rows `rows` (ascending, of `b`) of a block.
DenseBlock GatherRows(const DenseBlock& b, const std::vector<uint64_t>& rows) {
  DenseBlock out;
  out.dtype = b.dtype;
  out.elem_size = b.elem_size;
  out.row_elems = b.row_elems;
  out.rows = rows.size();
  const uint64_t w = b.row_elems;
  if (zarr::IsString(b.dtype)) {
    out.strings.reserve(rows.size() * w);
    for (uint64_t r : rows)
      out.strings.insert(out.strings.end(), b.strings.begin() + r * w,
                         b.strings.begin() + (r + 1) * w);
  } else {
    const size_t row_bytes = w * b.elem_size;
    char* to = out.Allocate(rows.size() * row_bytes);
    for (size_t i = 0; i < rows.size(); ++i)
      std::memcpy(to + i * row_bytes, b.raw() + rows[i] * row_bytes, row_bytes);
  }
  return out;
}

void GatherRows(std::optional<DenseBlock>* b, const std::vector<uint64_t>& rows) {
  if (*b) **b = GatherRows(**b, rows);
}

template <typename T>
std::vector<T> GatherVector(const std::vector<T>& v, uint64_t count,
                            const std::vector<uint64_t>& rows) {
  if (v.empty() || count == 0) return {};
  const uint64_t w = v.size() / count;
  std::vector<T> out;
  out.reserve(rows.size() * w);
  for (uint64_t r : rows) out.insert(out.end(), v.begin() + r * w, v.begin() + (r + 1) * w);
  return out;
}

// The rows `rows` (ascending, relative to b.first) of a block read over their covering range.
VariantBlock GatherBlock(VariantBlock&& b, const std::vector<uint64_t>& rows) {
  VariantBlock out;
  out.first = b.first + rows.front();
  out.count = rows.size();
  out.contig = GatherRows(b.contig, rows);
  out.position = GatherRows(b.position, rows);
  out.allele = GatherRows(b.allele, rows);
  out.length = std::move(b.length);
  out.id = std::move(b.id);
  out.quality = std::move(b.quality);
  out.filter = std::move(b.filter);
  out.genotype = std::move(b.genotype);
  out.phased = std::move(b.phased);
  GatherRows(&out.length, rows);
  GatherRows(&out.id, rows);
  GatherRows(&out.quality, rows);
  GatherRows(&out.filter, rows);
  GatherRows(&out.genotype, rows);
  GatherRows(&out.phased, rows);
  for (const DenseBlock& x : b.info)
    out.info.push_back(x.rows ? GatherRows(x, rows) : DenseBlock());
  for (const DenseBlock& x : b.format)
    out.format.push_back(x.rows ? GatherRows(x, rows) : DenseBlock());
  out.present = GatherVector(b.present, b.count, rows);
  out.allele_counts = GatherVector(b.allele_counts, b.count, rows);
  out.recounted = GatherVector(b.recounted, b.count, rows);
  return out;
}

// Columns `idx` (dimension 1, in that order) of rows [r0, r1) of a per-sample array: each
// sample chunk holding some of them is read once, over the columns it holds.
Result<DenseBlock> ReadSamples(const zarr::ZarrArray& a, uint64_t r0, uint64_t r1,
                               const std::vector<uint32_t>& idx) {
  const uint64_t per_chunk = a.meta().chunks.size() > 1 ? a.meta().chunks[1] : 1;
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> spans;  // sample chunk -> [lo, hi)
  for (uint32_t i : idx) {
    auto [it, fresh] = spans.try_emplace(i / per_chunk, i, i + 1);
    if (!fresh) {
      it->second.first = std::min(it->second.first, i);
      it->second.second = std::max(it->second.second, i + 1);
    }
  }
  std::map<uint64_t, DenseBlock> blocks;
  for (const auto& [chunk, span] : spans) {
    ASSIGN_OR_RETURN(blocks[chunk], a.ReadRows(r0, r1, span.first, span.second));
  }
  DenseBlock out;
  out.dtype = a.meta().dtype;
  out.elem_size = a.meta().native_size;
  out.rows = r1 - r0;
  uint64_t per_sample = 1;  // values per sample
  for (size_t d = 2; d < a.meta().shape.size(); ++d) per_sample *= a.meta().shape[d];
  out.row_elems = idx.size() * per_sample;
  const bool str = zarr::IsString(out.dtype);
  char* to = nullptr;
  if (str)
    out.strings.resize(out.rows * out.row_elems);
  else
    to = out.Allocate(out.rows * out.row_elems * out.elem_size);
  for (size_t j = 0; j < idx.size(); ++j) {
    const uint64_t chunk = idx[j] / per_chunk;
    const DenseBlock& from = blocks.at(chunk);
    const uint64_t column = idx[j] - spans.at(chunk).first;
    for (uint64_t row = 0; row < out.rows; ++row) {
      const uint64_t src = row * from.row_elems + column * per_sample,
                     dst = row * out.row_elems + j * per_sample;
      if (str) {
        std::copy_n(from.strings.begin() + src, per_sample, out.strings.begin() + dst);
      } else {
        std::memcpy(to + dst * out.elem_size, from.raw() + src * out.elem_size,
                    per_sample * out.elem_size);
      }
    }
  }
  return out;
}

// Per row of `sub` (the chosen samples' values): whether any sample of the store has a value.
// Rows the chosen samples leave empty are looked up in the other sample chunks one chunk at a
// time, stopping when every row has found one (a row empty everywhere reads them all).
Result<std::vector<uint8_t>> Presence(const zarr::ZarrArray& a, uint64_t r0, uint64_t r1,
                                      const DenseBlock& sub) {
  std::vector<uint8_t> present(sub.rows);
  std::vector<uint64_t> open;  // rows not settled yet
  for (uint64_t row = 0; row < sub.rows; ++row) {
    present[row] = !AllMissing(sub, row * sub.row_elems, sub.row_elems);
    if (!present[row]) open.push_back(row);
  }
  const uint64_t samples = a.meta().shape.size() > 1 ? a.meta().shape[1] : 1;
  const uint64_t per_chunk = a.meta().chunks.size() > 1 ? a.meta().chunks[1] : samples;
  for (uint64_t c0 = 0; c0 < samples && !open.empty(); c0 += per_chunk) {
    ASSIGN_OR_RETURN(DenseBlock block, a.ReadRows(r0, r1, c0, std::min(samples, c0 + per_chunk)));
    std::erase_if(open, [&](uint64_t row) {
      if (AllMissing(block, row * block.row_elems, block.row_elems)) return false;
      present[row] = 1;
      return true;
    });
  }
  return present;
}

}  // namespace

Result<std::shared_ptr<const Store>> Store::Slice(std::shared_ptr<const Store> root,
                                                  const Subset& subset) {
  if (root->root_) return InternalError(root->Describe() + ": a slice is taken of the root store");
  std::shared_ptr<Store> s(new Store(*root));
  s->root_ = root;
  s->subset_ = subset;
  if (subset.runs) {
    uint64_t rows = 0;
    for (const auto& [begin, end] : *subset.runs) {
      if (begin > end || end > root->num_variants_)
        return InternalError(root->Describe() + ": slice rows beyond the store");
      s->run_starts_.push_back(rows);
      rows += end - begin;
    }
    s->num_variants_ = rows;
  }
  if (subset.samples) {
    s->samples_.clear();
    for (uint32_t i : *subset.samples) {
      if (i >= root->samples_.size())
        return InternalError(root->Describe() + ": slice sample beyond the store");
      s->samples_.push_back(root->samples_[i]);
    }
  }
  if (subset.format) {
    const auto& keep = *subset.format;
    auto kept = [&](const std::string& key) {
      return std::find(keep.begin(), keep.end(), key) != keep.end();
    };
    for (const std::string& key : keep) {
      const bool known = key == "GT" ? root->genotype_.has_value()
                                     : std::any_of(root->format_.begin(), root->format_.end(),
                                                   [&](const Field& f) { return f.key == key; });
      if (!known) return NotFoundError(root->Describe() + ": no FORMAT field " + key);
    }
    std::erase_if(s->format_, [&](const Field& f) { return !kept(f.key); });
    if (!kept("GT")) {
      s->genotype_.reset();
      s->phased_.reset();
    }
  }
  s->subset_.recount = subset.recount && root->genotype_.has_value() && subset.samples.has_value();
  return std::shared_ptr<const Store>(std::move(s));
}

Result<VariantBlock> Store::ReadSlice(uint64_t v0, uint64_t v1, bool with_samples, unsigned parts,
                                      bool reverse) const {
  if (v0 > v1 || v1 > num_variants_)
    return InternalError(Describe() + ": slice rows beyond the slice");
  if (!subset_.runs) {
    ASSIGN_OR_RETURN(VariantBlock b, ReadPiece(v0, v1, with_samples, parts, reverse));
    b.first = v0;
    return b;
  }
  VariantBlock out;
  out.first = v0;
  const auto& runs = *subset_.runs;
  size_t r = std::upper_bound(run_starts_.begin(), run_starts_.end(), v0) - run_starts_.begin();
  r = r == 0 ? 0 : r - 1;
  // The root rows of [v0, v1), piece by piece.
  std::vector<std::pair<uint64_t, uint64_t>> pieces;
  for (uint64_t at = v0; at < v1; ++r) {
    while (r < runs.size() && run_starts_[r] + (runs[r].second - runs[r].first) <= at)
      ++r;  // empty runs
    if (r >= runs.size()) return InternalError(Describe() + ": slice rows beyond its runs");
    const uint64_t offset = at - run_starts_[r];
    const uint64_t take = std::min(v1 - at, runs[r].second - runs[r].first - offset);
    pieces.emplace_back(runs[r].first + offset, runs[r].first + offset + take);
    at += take;
  }
  // Pieces ascending within one variants-chunk of the root (a filter's scattered rows) are read
  // once over their covering range and the rows gathered: one read per chunk, not per piece.
  const uint64_t chunk = std::max<uint64_t>(1, root_->range_rows());
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i + 1;
    while (j < pieces.size() && pieces[j].first >= pieces[j - 1].second &&
           (pieces[j].second - 1) / chunk == pieces[i].first / chunk)
      ++j;
    if (j == i + 1) {
      ASSIGN_OR_RETURN(VariantBlock piece,
                       ReadPiece(pieces[i].first, pieces[i].second, with_samples, parts, reverse));
      AppendBlock(&out, std::move(piece));
    } else {
      const uint64_t b0 = pieces[i].first, b1 = pieces[j - 1].second;
      ASSIGN_OR_RETURN(VariantBlock cover, ReadPiece(b0, b1, with_samples, parts, reverse));
      std::vector<uint64_t> rows;
      for (size_t k = i; k < j; ++k)
        for (uint64_t x = pieces[k].first; x < pieces[k].second; ++x) rows.push_back(x - b0);
      AppendBlock(&out, GatherBlock(std::move(cover), rows));
    }
    i = j;
  }
  return out;
}

Result<VariantBlock> Store::ReadPiece(uint64_t r0, uint64_t r1, bool with_samples, unsigned parts,
                                      bool reverse) const {
  const Store& root = *root_;
  const bool everything = parts & kEverything;
  const std::vector<uint32_t>* chosen = subset_.samples ? &*subset_.samples : nullptr;
  VariantBlock b;
  b.first = r0;
  b.count = r1 - r0;
  std::vector<std::function<Status()>> reads;
  std::vector<const zarr::ZarrArray*> arrays;  // what they read
  auto fixed = [&](const std::optional<zarr::ZarrArray>& a, DenseBlock* out) {
    arrays.push_back(&*a);
    reads.push_back([&a, out, r0, r1]() -> Status {
      ASSIGN_OR_RETURN(*out, a->ReadRows(r0, r1));
      return OkStatus();
    });
  };
  auto per_sample = [&](const zarr::ZarrArray& a, DenseBlock* out) {
    arrays.push_back(&a);
    reads.push_back([&a, out, r0, r1, chosen]() -> Status {
      if (chosen != nullptr) {
        ASSIGN_OR_RETURN(*out, ReadSamples(a, r0, r1, *chosen));
      } else {
        ASSIGN_OR_RETURN(*out, a.ReadRows(r0, r1));
      }
      return OkStatus();
    });
  };
  if (everything || (parts & kContig)) fixed(contig_, &b.contig);
  if (everything || (parts & kPosition)) fixed(position_, &b.position);
  if (everything || (parts & kAllele)) fixed(allele_, &b.allele);
  if ((everything || (parts & kId)) && id_) fixed(id_, &b.id.emplace());
  if ((parts & kLength) && length_) fixed(length_, &b.length.emplace());
  if ((everything || (parts & kQuality)) && quality_) fixed(quality_, &b.quality.emplace());
  if ((everything || (parts & kFilter)) && filter_) fixed(filter_, &b.filter.emplace());
  if (everything || (parts & kInfo)) {
    b.info.resize(info_.size());
    for (size_t i = 0; i < info_.size(); ++i) {
      arrays.push_back(&info_[i].array);
      reads.push_back([this, &b, i, r0, r1]() -> Status {
        ASSIGN_OR_RETURN(b.info[i], info_[i].array.ReadRows(r0, r1));
        return OkStatus();
      });
    }
  }
  const bool samples =
      !samples_.empty() && ((everything && with_samples) || (parts & (kGenotype | kFormat)));
  if (samples && genotype_ && (everything || (parts & kGenotype)))
    per_sample(*genotype_, &b.genotype.emplace());
  if (samples && everything) {
    if (phased_) per_sample(*phased_, &b.phased.emplace());
    b.format.resize(format_.size());
    for (size_t i = 0; i < format_.size(); ++i) per_sample(format_[i].array, &b.format[i]);
  } else if (samples && (parts & kFormat)) {
    b.format.resize(format_.size());
    for (size_t i = 0; i < format_.size(); ++i) per_sample(format_[i].array, &b.format[i]);
  }
  // The recount needs the chosen samples' GT even where GT is not shown.
  const bool recounting = (everything || (parts & kCounts)) && recount();
  std::optional<DenseBlock> hidden_gt;
  if (recounting && !b.genotype) per_sample(*root.genotype_, &hidden_gt.emplace());
  if (reverse) std::reverse(reads.begin(), reads.end());
  const cache::CachePool::HandOff hand_off;
  RETURN_IF_ERROR(ParallelFor(reads.size(), ReadWidth(arrays, r0, r1), [&](size_t i) {
    cache::CachePool::Carry scope(hand_off);
    return reads[i]();
  }));

  const DenseBlock* gt = b.genotype ? &*b.genotype : hidden_gt ? &*hidden_gt : nullptr;
  std::vector<uint8_t> gt_present;
  if (chosen != nullptr && gt != nullptr && ((samples && everything) || recounting)) {
    ASSIGN_OR_RETURN(gt_present, Presence(*root.genotype_, r0, r1, *gt));
  }
  if (chosen != nullptr && samples && everything) {  // the parent's FORMAT column
    const size_t width = 1 + format_.size();
    b.present.assign(b.count * width, 0);
    for (uint64_t row = 0; row < b.count && !gt_present.empty() && b.genotype; ++row)
      b.present[row * width] = gt_present[row];
    for (size_t j = 0; j < format_.size(); ++j) {
      ASSIGN_OR_RETURN(std::vector<uint8_t> p, Presence(format_[j].array, r0, r1, b.format[j]));
      for (uint64_t row = 0; row < b.count; ++row) b.present[row * width + 1 + j] = p[row];
    }
  }
  if (recounting) {  // bcftools view -s: AC and AN from the chosen samples' calls
    const uint64_t na = b.allele.row_elems;
    b.allele_counts.assign(b.count * na, 0);
    b.recounted.assign(b.count, 0);
    const uint64_t calls = gt->row_elems;
    for (uint64_t row = 0; row < b.count; ++row) {
      if (!gt_present[row]) continue;  // no GT in the parent's record: left alone
      b.recounted[row] = 1;
      for (uint64_t c = 0; c < calls; ++c) {
        const int64_t allele = zarr::IntAt(*gt, row * calls + c);
        if (allele >= 0 && static_cast<uint64_t>(allele) < na) ++b.allele_counts[row * na + allele];
      }
    }
  }
  return b;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> Store::RowsOverlapping(
    const std::vector<Region>& regions) const {
  if (root_) return InternalError(Describe() + ": regions are found in the root store");
  // Per contig, in the order first named: its regions merged into disjoint sorted intervals.
  std::vector<int64_t> order;
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> wanted;
  for (const Region& r : regions) {
    if (r.begin > r.end) continue;
    auto [it, fresh] = wanted.try_emplace(r.contig);
    if (fresh) order.push_back(r.contig);
    it->second.emplace_back(r.begin, r.end);
  }
  for (auto& [contig, spans] : wanted) {
    std::sort(spans.begin(), spans.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (const auto& span : spans) {
      if (!merged.empty() && span.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, span.second);
      } else {
        merged.push_back(span);
      }
    }
    spans = std::move(merged);
  }
  auto meets = [](const std::vector<std::pair<int64_t, int64_t>>& spans, int64_t begin,
                  int64_t end) {
    // The first interval ending at or after `begin` meets [begin, end] if it starts by `end`.
    auto it = std::lower_bound(spans.begin(), spans.end(), begin,
                               [](const auto& s, int64_t b) { return s.second < b; });
    return it != spans.end() && it->first <= end;
  };
  ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<ChunkRegion>> summary, Regions());
  const uint64_t chunk_rows = region_chunk_rows();
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  for (int64_t contig : order) {
    const auto& spans = wanted.at(contig);
    std::vector<uint64_t> chunks;  // the chunks that may hold overlapping records, ascending
    for (const ChunkRegion& c : *summary) {
      if (c.contig == contig && meets(spans, c.first_pos, std::max(c.max_end, c.last_pos)) &&
          (chunks.empty() || chunks.back() != c.chunk)) {
        chunks.push_back(c.chunk);
      }
    }
    for (uint64_t chunk : chunks) {
      const uint64_t v0 = chunk * chunk_rows, v1 = std::min(num_variants_, v0 + chunk_rows);
      if (v0 >= v1)
        return CorruptError(Describe() + ": region summary names chunk " + std::to_string(chunk) +
                            " beyond the variants");
      ASSIGN_OR_RETURN(RecordSpans rec, SpansOf(v0, v1));
      for (uint64_t row = 0; row < v1 - v0; ++row) {
        if (rec.contig[row] != contig) continue;
        // A record of length 0 or less (a missing REF) still covers its POS, as in tabix.
        if (!meets(spans, rec.pos[row], std::max(rec.end[row], rec.pos[row]))) continue;
        const uint64_t v = v0 + row;
        if (!runs.empty() && runs.back().second == v) {
          ++runs.back().second;
        } else {
          runs.emplace_back(v, v + 1);
        }
      }
    }
  }
  return runs;
}

}  // namespace omicsfs::formats::vcz
