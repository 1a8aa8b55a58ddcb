// A VCF Zarr store (spec 0.2–0.4 and what bio2zarr writes; Zarr v2 or v3): contigs, samples,
// filters, the INFO/FORMAT field catalogue, and decoded variant ranges. Never formats text.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/zarr/array.h"
#include "io/blob_store.h"
#include "util/file.h"

namespace omicsfs::formats::vcz {

// One row per (variants-chunk, contig run): bio2zarr's region_index rows. `max_end` is the
// largest POS + rlen - 1 of the run (rlen: htslib's, the REF length or INFO/END - POS + 1).
struct ChunkRegion {
  uint64_t chunk = 0;
  int64_t contig = 0;
  int64_t first_pos = 0, last_pos = 0, max_end = 0;
  uint64_t records = 0;
  bool operator==(const ChunkRegion&) const = default;
};

struct Field {
  std::string key;        // VCF key, e.g. "DP"
  zarr::ZarrArray array;  // variant_<key> or call_<key>
  std::string number;     // "0", "1", "A", "R", "G" or a fixed width
  std::string type;       // Flag, Integer, Float, Character, String
  std::string description;
};

// Every array a record range needs, rows [v0, v1).
struct VariantBlock {
  uint64_t first = 0, count = 0;
  zarr::DenseBlock contig, position, allele;
  std::optional<zarr::DenseBlock> length;  // ReadParts(kLength) of a store with variant_length
  std::optional<zarr::DenseBlock> id, quality, filter, genotype, phased;
  std::vector<zarr::DenseBlock> info;    // parallel to Store::info()
  std::vector<zarr::DenseBlock> format;  // parallel to Store::format(); empty without samples
  // Slices with chosen samples (Store::Slice): per row, whether GT and each FORMAT field hold a
  // value for any sample of the whole store — the parent's FORMAT column — at
  // [row * (1 + format.size())], GT first. Empty: decided from the block's own samples.
  std::vector<uint8_t> present;
  // Slices that recount INFO/AC and AN: per row, the chosen samples' count of each allele
  // (allele.row_elems per row), and whether the row is recounted (its GT is shown in the parent).
  std::vector<uint32_t> allele_counts;
  std::vector<uint8_t> recounted;
};

// A region of a contig: positions [begin, end], 1-based, inclusive.
struct Region {
  int64_t contig = 0;
  int64_t begin = 1, end = INT64_MAX;
};

// A subset of a store, in its own coordinates: what a slice holds.
struct Subset {
  // Rows as runs [begin, end), in output order (bcftools' region order); nullopt: every row.
  std::optional<std::vector<std::pair<uint64_t, uint64_t>>> runs;
  // Sample indices, in output order; nullopt: every sample.
  std::optional<std::vector<uint32_t>> samples;
  // FORMAT keys kept ("GT" for call_genotype); nullopt: every one.
  std::optional<std::vector<std::string>> format;
  // INFO/AC and AN recomputed from the chosen samples' GT (bcftools view -s).
  bool recount = false;
};

class Store {
 public:
  // True when the blob store's root is a Zarr group whose attributes carry `vcf_zarr_version`.
  static bool Looks(const io::BlobStore& blobs);
  // With an active guard, chunks changed on disk since the store was fingerprinted are refused.
  // With a pool, decoded chunks are kept in it (record ranges smaller than a chunk share them).
  static Result<std::shared_ptr<const Store>> Open(const std::string& dir, ChangeGuard guard = {},
                                                   cache::CachePool* pool = nullptr);
  // Over any blob store (any ByteSpace through io::SpaceBlobStore; in-memory stores in tests).
  static Result<std::shared_ptr<const Store>> Open(std::shared_ptr<const io::BlobStore> blobs,
                                                   cache::CachePool* pool = nullptr);
  // Open where Looks would say yes, else nullptr (not a VCF Zarr store: no error): the root's
  // attributes read once for both (a remote store: one round trip fewer).
  static Result<std::shared_ptr<const Store>> OpenIfVcz(std::shared_ptr<const io::BlobStore> blobs,
                                                        cache::CachePool* pool = nullptr);

  const std::string& Describe() const { return dir_; }
  uint64_t num_variants() const { return num_variants_; }
  const std::vector<std::string>& samples() const { return samples_; }
  const std::vector<std::string>& contigs() const { return contigs_; }
  const std::optional<std::vector<int64_t>>& contig_lengths() const { return contig_lengths_; }
  const std::vector<std::string>& filters() const { return filters_; }
  const std::vector<std::string>& filter_descriptions() const { return filter_descriptions_; }
  const std::optional<std::string>& source() const { return source_; }
  const std::optional<std::string>& vcf_header() const { return vcf_header_; }
  const std::vector<std::pair<std::string, std::string>>& meta_information() const { return meta_; }
  const std::vector<Field>& info() const { return info_; }      // sorted by key
  const std::vector<Field>& format() const { return format_; }  // sorted by key, GT excluded
  bool has_genotype() const { return genotype_.has_value(); }
  // call_genotype's ploidy dimension (the most alleles a call holds); 0 without call_genotype.
  uint64_t ploidy() const {
    return genotype_ && genotype_->meta().shape.size() > 2 ? genotype_->meta().shape[2] : 0;
  }
  // Rows per record range: the smallest variants-chunk of the arrays a record needs.
  uint64_t range_rows() const { return range_rows_; }

  // The region summary, in store order (ascending chunk). From the store's `region_index` array
  // when it has one (bio2zarr `vcf2zarr encode`: 2-D, six columns [chunk_index, contig_id,
  // first_POS, last_POS, max_end, num_records]) and it passes validation (shape, chunk and contig
  // ranges, per-chunk record counts, and its rows of the first and last chunk equal to those
  // computed); otherwise, with a warning naming the store, computed from variant_contig,
  // variant_position and variant_length (without variant_length: htslib's rlen from the REF in
  // variant_allele column 0 and variant_END). Kept after the first success, never recomputed.
  Result<std::shared_ptr<const std::vector<ChunkRegion>>> Regions() const;
  // Rows per chunk the `chunk` column counts in: vcztools' minimum variants-chunk (the call_*
  // arrays' chunks[0], else the GCD of the variant arrays' chunks[0]), which is variant_position's
  // chunks[0] in every store bio2zarr writes (one variants-chunk size for all arrays) and what
  // vcztools' own re-chunked fixtures count their region_index in.
  uint64_t region_chunk_rows() const;
  // Where a computed region summary is kept between mounts (index_dir, under the store's
  // fingerprint): `load` gives the bytes saved before, if any, `save` keeps new ones. Set before
  // the first Regions(); without it a computed summary lives as long as the store.
  struct RegionsKeeper {
    std::function<std::optional<std::string>()> load;
    std::function<void(const std::string&)> save;
  };
  void KeepRegionsWith(RegionsKeeper keeper) const;
  // Whether Regions() is one small read (a stored region_index) rather than a pass over the
  // identifying arrays of every variants-chunk.
  bool has_region_index() const { return root().region_index_.has_value(); }
  // The largest record end (POS + rlen - 1) of the store, from Regions(); nullopt when empty.
  Result<std::optional<int64_t>> MaxEnd() const;

  // The arrays are read (on a cache miss: decoded) in a fixed order, or in the opposite order
  // with `reverse`: two workers rendering neighbouring ranges of one new variants-chunk pass
  // opposite orders, so that each decodes different arrays instead of waiting for the other's.
  Result<VariantBlock> Read(uint64_t v0, uint64_t v1, bool with_samples,
                            bool reverse = false) const;

  // Only some arrays of rows [v0, v1) (the PLINK views need neither INFO nor FORMAT); blocks not
  // asked for stay empty. kGenotype gives `genotype` only when the store has call_genotype.
  enum Part : unsigned {
    kContig = 1,
    kPosition = 2,
    kId = 4,
    kAllele = 8,
    kGenotype = 16,
    kLength = 32,
    kQuality = 64,
    kFilter = 128,
    kInfo = 256,     // every INFO field
    kFormat = 512,   // every FORMAT field but GT (and the phasing), of the store's samples
    kCounts = 1024,  // (slices that recount) allele_counts and recounted
  };
  static constexpr unsigned kEverything = 1u << 30;  // (slices) every array Read gives
  Result<VariantBlock> ReadParts(uint64_t v0, uint64_t v1, unsigned parts) const;

  // The rows whose records overlap any of `regions` (POS … POS + rlen − 1 meets it; rlen from
  // variant_length, else the REF length), as runs: contigs in the order the regions first name
  // them, rows in store order within a contig, each row once (bcftools view -r). Only the
  // chunks the region summary (Regions()) says may overlap are read.
  Result<std::vector<std::pair<uint64_t, uint64_t>>> RowsOverlapping(
      const std::vector<Region>& regions) const;

  // `root` (a store as opened) cut to `subset` of its rows, samples and FORMAT fields: the same
  // API, reading only the chunks the subset touches. A slice of a slice is the root cut to the
  // two subsets composed. Fails on indices out of range or FORMAT keys the store lacks.
  static Result<std::shared_ptr<const Store>> Slice(std::shared_ptr<const Store> root,
                                                    const Subset& subset);
  // The subset this store is of the root store (nullptr for a store as opened).
  const Subset* subset() const { return root_ ? &subset_ : nullptr; }
  const Store& root() const { return root_ ? *root_ : *this; }
  bool recount() const { return root_ && subset_.recount; }

 private:
  // Open, the root's attributes read already.
  static Result<std::shared_ptr<const Store>> OpenWith(std::shared_ptr<const io::BlobStore> blobs,
                                                       cache::CachePool* pool,
                                                       const nlohmann::json& attrs);
  // A slice's rows [v0, v1): the root's rows piece by piece, samples gathered, joined.
  Result<VariantBlock> ReadSlice(uint64_t v0, uint64_t v1, bool with_samples, unsigned parts,
                                 bool reverse) const;
  // Root rows [r0, r1) of one run, per-sample arrays cut to the chosen samples.
  Result<VariantBlock> ReadPiece(uint64_t r0, uint64_t r1, bool with_samples, unsigned parts,
                                 bool reverse) const;
  // How many threads read rows [r0, r1) of `arrays`: the blob store's parallelism (remote: one
  // round trip for all), or every core for a read (not a pass) of local chunks not cached yet
  // (decoding is then what it costs: a region query's first record waits for its variants-chunk
  // of every array, ~55 MB decoded in a 5 000-sample cohort). Passes already run a chunk per core,
  // and each keeps what it decoded (the cache's pins are per thread).
  unsigned ReadWidth(const std::vector<const zarr::ZarrArray*>& arrays, uint64_t r0,
                     uint64_t r1) const;
  // Rows [v0, v1) of each array into its block.
  Status ReadArrays(const std::vector<std::pair<const zarr::ZarrArray*, zarr::DenseBlock*>>& reads,
                    uint64_t v0, uint64_t v1) const;
  Store() = default;
  // Regions(): the rows of variants-chunks [c0, c1) computed from the variant arrays; the stored
  // region_index, or why it cannot be trusted; and the rows once known (a copied Store starts
  // with none).
  Result<std::vector<ChunkRegion>> ComputeRegions(uint64_t c0, uint64_t c1) const;
  // Rows [v0, v1): each record's contig, POS and last base POS + rlen - 1 (htslib's rlen:
  // variant_length, else the REF length or INFO/END - POS + 1 where END >= POS).
  struct RecordSpans {
    std::vector<int64_t> contig, pos, end;
  };
  Result<RecordSpans> SpansOf(uint64_t v0, uint64_t v1) const;
  Result<std::vector<ChunkRegion>> StoredRegions() const;
  std::optional<std::vector<ChunkRegion>> ParseKept(const std::string& bytes) const;
  struct RegionsMemo {
    RegionsMemo() = default;
    RegionsMemo(const RegionsMemo&) {}
    RegionsMemo& operator=(const RegionsMemo&) { return *this; }
    std::mutex mu;
    std::shared_ptr<const std::vector<ChunkRegion>> rows;
    RegionsKeeper keeper;
  };
  mutable RegionsMemo regions_;
  std::optional<zarr::ZarrArray> region_index_;

  std::string dir_;
  std::shared_ptr<const io::BlobStore> blobs_;
  uint64_t num_variants_ = 0;
  uint64_t range_rows_ = 1;
  std::vector<std::string> samples_, contigs_, filters_, filter_descriptions_;
  std::optional<std::vector<int64_t>> contig_lengths_;
  std::optional<std::string> source_, vcf_header_;
  std::vector<std::pair<std::string, std::string>> meta_;
  std::optional<zarr::ZarrArray> length_;
  std::optional<zarr::ZarrArray> contig_, position_, allele_, id_, quality_, filter_, genotype_,
      phased_;
  std::vector<Field> info_, format_;
  // Slices: the root store, the subset of it, and where each run starts in the slice's rows.
  std::shared_ptr<const Store> root_;
  Subset subset_;
  std::vector<uint64_t> run_starts_;
};

}  // namespace omicsfs::formats::vcz
