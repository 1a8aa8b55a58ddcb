// Store::Regions(): the region summary of a VCF Zarr store, one row per (variants-chunk, contig
// run). Read from bio2zarr's `region_index` array when the store has one and it holds up, else
// computed the way bio2zarr's VcfZarrIndexer.create_index (bio2zarr/vcz.py) builds that array:
// per variants-chunk, a row each time variant_contig changes, with the run's first and last POS,
// max(POS + variant_length - 1) and its record count. Chunks count region_chunk_rows() rows.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "formats/vcz/store.h"
#include "util/log.h"
#include "util/parallel.h"

namespace omicsfs::formats::vcz {
namespace {

using zarr::DenseBlock;
using zarr::IntAt;

bool IsInt(zarr::DType t) { return zarr::IsSignedInt(t) || zarr::IsUnsignedInt(t); }

// A 1-D integer array with one value per variant.
bool PerVariantInts(const zarr::ZarrArray& a, uint64_t n) {
  return a.meta().shape.size() == 1 && IsInt(a.meta().dtype) && a.rows() == n;
}

// htslib's rlen from REF as the VCF view writes it (a missing REF is written '.': length 1).
int64_t RefLength(const std::string& ref) {
  const bool missing =
      std::all_of(ref.begin(), ref.end(), [](char c) { return c == '.' || c == '\0'; });
  return missing ? 1 : static_cast<int64_t>(ref.size());
}

std::string Row(const ChunkRegion& r) {
  return std::string("[") + std::to_string(r.chunk) + ", " + std::to_string(r.contig) + ", " +
         std::to_string(r.first_pos) + ", " + std::to_string(r.last_pos) + ", " +
         std::to_string(r.max_end) + ", " + std::to_string(r.records) + "]";
}

}  // namespace

uint64_t Store::region_chunk_rows() const {
  if (root_) return root_->region_chunk_rows();  // a slice's FORMAT fields are fewer
  // vcztools' compute_min_variants_chunk_size (vcztools/utils.py): regions_to_chunk_indexes reads
  // region_index's chunk column in these units.
  uint64_t call = 0, gcd = 0;
  auto per_call = [&](const zarr::ZarrArray& a) {
    call = call == 0 ? a.meta().chunks[0] : std::min(call, a.meta().chunks[0]);
  };
  if (genotype_) per_call(*genotype_);
  if (phased_) per_call(*phased_);
  for (const Field& f : format_) per_call(f.array);
  if (call != 0) return call;
  for (const auto* a : {&contig_, &position_, &allele_, &id_, &quality_, &filter_, &length_}) {
    if (*a) gcd = std::gcd(gcd, (*a)->meta().chunks[0]);
  }
  for (const Field& f : info_) gcd = std::gcd(gcd, f.array.meta().chunks[0]);
  return std::max<uint64_t>(gcd, 1);
}

Result<Store::RecordSpans> Store::SpansOf(uint64_t v0, uint64_t v1) const {
  if (root_) return root_->SpansOf(v0, v1);
  const uint64_t n = num_variants_;
  if (!IsInt(contig_->meta().dtype) || !IsInt(position_->meta().dtype)) {
    return CorruptError("variant_contig and variant_position must be integers");
  }
  // variant_length is htslib's rlen (bio2zarr stores `variant.end - variant.start`); without it,
  // rlen as htslib's vcf_parse sets it: the REF length, or INFO/END - POS + 1 where END >= POS.
  const bool use_length = length_ && PerVariantInts(*length_, n);
  const zarr::ZarrArray* end = nullptr;
  if (!use_length) {
    if (!zarr::IsString(allele_->meta().dtype))
      return CorruptError("variant_allele must hold strings");
    for (const Field& f : info_) {
      if (f.key == "END" && PerVariantInts(f.array, n)) end = &f.array;
    }
  }
  DenseBlock contig, pos, len, allele, ends;
  std::vector<std::pair<const zarr::ZarrArray*, DenseBlock*>> reads = {{&*contig_, &contig},
                                                                       {&*position_, &pos}};
  if (use_length) {
    reads.emplace_back(&*length_, &len);
  } else {
    reads.emplace_back(&*allele_, &allele);
    if (end != nullptr) reads.emplace_back(end, &ends);
  }
  RETURN_IF_ERROR(ReadArrays(reads, v0, v1));
  RecordSpans out;
  const uint64_t m = v1 - v0;
  out.contig.resize(m);
  out.pos.resize(m);
  out.end.resize(m);
  for (uint64_t e = 0; e < m; ++e) {
    const int64_t p = IntAt(pos, e);
    int64_t rlen = 0;
    if (use_length) {
      rlen = IntAt(len, e);
    } else {
      rlen = RefLength(allele.strings[e * allele.row_elems]);
      if (end != nullptr && IntAt(ends, e) > p - 1) rlen = IntAt(ends, e) - p + 1;
    }
    out.contig[e] = IntAt(contig, e);
    out.pos[e] = p;
    out.end[e] = p + rlen - 1;
  }
  return out;
}

Result<std::vector<ChunkRegion>> Store::ComputeRegions(uint64_t c0, uint64_t c1) const {
  const uint64_t per_chunk = region_chunk_rows(), n = num_variants_;
  std::vector<std::vector<ChunkRegion>> rows(c1 - c0);
  RETURN_IF_ERROR(ParallelFor(c1 - c0, blobs_->Parallelism(), [&](size_t i) -> Status {
    const uint64_t c = c0 + i, v0 = c * per_chunk, v1 = std::min(n, v0 + per_chunk);
    auto spans = SpansOf(v0, v1);
    if (!spans.ok())
      return std::move(spans).status().WithContext("variants-chunk " + std::to_string(c));
    const uint64_t m = v1 - v0;
    for (uint64_t r = 0; r < m;) {
      ChunkRegion row;
      row.chunk = c;
      row.contig = spans->contig[r];
      row.first_pos = spans->pos[r];
      row.max_end = INT64_MIN;
      uint64_t e = r;
      for (; e < m && spans->contig[e] == row.contig; ++e) {
        row.max_end = std::max(row.max_end, spans->end[e]);
        row.last_pos = spans->pos[e];
      }
      row.records = e - r;
      rows[i].push_back(row);
      r = e;
    }
    return OkStatus();
  }));
  std::vector<ChunkRegion> out;
  for (auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

Result<std::vector<ChunkRegion>> Store::StoredRegions() const {
  const zarr::ArrayMetadata& m = region_index_->meta();
  const uint64_t per_chunk = region_chunk_rows(), n = num_variants_;
  const uint64_t chunks = (n + per_chunk - 1) / per_chunk;
  if (m.shape.size() != 2 || m.shape[1] != 6) {
    std::string dims;
    for (uint64_t d : m.shape) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
    return CorruptError("shape " + dims + ", expected (rows, 6)");
  }
  if (!IsInt(m.dtype)) return CorruptError("not integers");
  if (m.shape[0] > n)
    return CorruptError(std::to_string(m.shape[0]) + " rows for " + std::to_string(n) +
                        " variants");
  std::vector<ChunkRegion> rows;
  if (m.shape[0] == 0) {
    if (n != 0) return CorruptError("no rows for " + std::to_string(n) + " variants");
    return rows;
  }
  ASSIGN_OR_RETURN(DenseBlock b, region_index_->ReadAll());
  std::vector<uint64_t> records(chunks, 0);
  for (uint64_t i = 0; i < b.rows; ++i) {
    int64_t v[6];
    for (int k = 0; k < 6; ++k) v[k] = IntAt(b, i * 6 + k);
    const std::string at = "row " + std::to_string(i) + ": ";
    if (v[0] < 0 || static_cast<uint64_t>(v[0]) >= chunks) {
      return CorruptError(at + "chunk index " + std::to_string(v[0]) + " out of range (" +
                          std::to_string(chunks) + " chunks)");
    }
    if (!rows.empty() && static_cast<uint64_t>(v[0]) < rows.back().chunk)
      return CorruptError(at + "chunks out of order");
    if (v[1] < 0 || static_cast<uint64_t>(v[1]) >= contigs_.size()) {
      return CorruptError(at + "contig " + std::to_string(v[1]) + " out of range (" +
                          std::to_string(contigs_.size()) + " contigs)");
    }
    if (v[5] <= 0 || static_cast<uint64_t>(v[5]) > per_chunk)
      return CorruptError(at + std::to_string(v[5]) + " records");
    rows.push_back(
        {static_cast<uint64_t>(v[0]), v[1], v[2], v[3], v[4], static_cast<uint64_t>(v[5])});
    records[v[0]] += static_cast<uint64_t>(v[5]);
  }
  for (uint64_t c = 0; c < chunks; ++c) {
    const uint64_t held = std::min(per_chunk, n - c * per_chunk);
    if (records[c] != held) {
      return CorruptError("chunk " + std::to_string(c) + ": " + std::to_string(records[c]) +
                          " records, the chunk holds " + std::to_string(held));
    }
  }
  // A store whose variant arrays were rewritten after `encode` keeps a stale index that passes the
  // checks above: its rows of the first and the last chunk must equal the computed ones.
  for (uint64_t c : {uint64_t{0}, chunks - 1}) {
    ASSIGN_OR_RETURN(std::vector<ChunkRegion> computed, ComputeRegions(c, c + 1));
    auto first =
        std::find_if(rows.begin(), rows.end(), [&](const ChunkRegion& r) { return r.chunk == c; });
    auto last = std::find_if(first, rows.end(), [&](const ChunkRegion& r) { return r.chunk != c; });
    if (!std::equal(first, last, computed.begin(), computed.end())) {
      std::string theirs, ours;
      for (auto it = first; it != last; ++it) theirs += (theirs.empty() ? "" : " ") + Row(*it);
      for (const auto& r : computed) ours += (ours.empty() ? "" : " ") + Row(r);
      return CorruptError("chunk " + std::to_string(c) + ": rows " + theirs +
                          ", the variant arrays give " + ours);
    }
    if (chunks == 1) break;
  }
  return rows;
}

void Store::KeepRegionsWith(RegionsKeeper keeper) const {
  std::lock_guard<std::mutex> lock(regions_.mu);
  regions_.keeper = std::move(keeper);
}

// Rows saved by an earlier mount (six int64 each), if they still account for every variant in
// ascending chunks (the file is keyed by the store's fingerprint and checksummed: this guards
// against a reader of another version).
std::optional<std::vector<ChunkRegion>> Store::ParseKept(const std::string& bytes) const {
  constexpr size_t kRow = 6 * sizeof(int64_t);
  if (bytes.size() % kRow != 0) return std::nullopt;
  const uint64_t per_chunk = region_chunk_rows();
  const uint64_t chunks = (num_variants_ + per_chunk - 1) / per_chunk;
  std::vector<ChunkRegion> rows;
  std::vector<uint64_t> records(chunks, 0);
  for (size_t at = 0; at < bytes.size(); at += kRow) {
    int64_t v[6];
    std::memcpy(v, bytes.data() + at, kRow);
    if (v[0] < 0 || static_cast<uint64_t>(v[0]) >= chunks ||
        (!rows.empty() && static_cast<uint64_t>(v[0]) < rows.back().chunk) || v[1] < 0 ||
        static_cast<uint64_t>(v[1]) >= contigs_.size() || v[5] <= 0) {
      return std::nullopt;
    }
    rows.push_back(
        {static_cast<uint64_t>(v[0]), v[1], v[2], v[3], v[4], static_cast<uint64_t>(v[5])});
    records[v[0]] += static_cast<uint64_t>(v[5]);
  }
  for (uint64_t c = 0; c < chunks; ++c) {
    if (records[c] != std::min(per_chunk, num_variants_ - c * per_chunk)) return std::nullopt;
  }
  return rows;
}

Result<std::shared_ptr<const std::vector<ChunkRegion>>> Store::Regions() const {
  if (root_) return root_->Regions();  // a slice's rows are the root's
  std::lock_guard<std::mutex> lock(regions_.mu);
  if (regions_.rows) return regions_.rows;
  std::optional<std::vector<ChunkRegion>> rows;
  if (region_index_) {
    auto stored = StoredRegions();
    if (stored.ok()) {
      rows = std::move(stored).value();
    } else if (stored.status().code() == ErrorCode::kCorrupt) {
      LogWarning(dir_ + ": region_index not used (" + stored.status().message() +
                 "); the region summary is computed from the variant arrays");
    } else {
      return std::move(stored).status().WithContext(dir_ + ": region_index");
    }
  }
  if (!rows && regions_.keeper.load) {  // computed at an earlier mount
    if (auto bytes = regions_.keeper.load()) rows = ParseKept(*bytes);
  }
  if (!rows) {
    const uint64_t per_chunk = region_chunk_rows();
    auto computed = ComputeRegions(0, (num_variants_ + per_chunk - 1) / per_chunk);
    if (!computed.ok()) return std::move(computed).status().WithContext(dir_ + ": region summary");
    rows = std::move(computed).value();
    if (regions_.keeper.save) {
      std::string bytes;
      for (const ChunkRegion& r : *rows) {
        for (int64_t v : {static_cast<int64_t>(r.chunk), r.contig, r.first_pos, r.last_pos,
                          r.max_end, static_cast<int64_t>(r.records)}) {
          bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
        }
      }
      regions_.keeper.save(bytes);
    }
  }
  regions_.rows = std::make_shared<const std::vector<ChunkRegion>>(std::move(*rows));
  return regions_.rows;
}

Result<std::optional<int64_t>> Store::MaxEnd() const {
  ASSIGN_OR_RETURN(auto rows, Regions());
  std::optional<int64_t> max_end;
  for (const ChunkRegion& r : *rows) {
    if (!max_end || r.max_end > *max_end) max_end = r.max_end;
  }
  return max_end;
}

}  // namespace omicsfs::formats::vcz
