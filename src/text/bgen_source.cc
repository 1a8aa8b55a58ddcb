#include "text/bgen_source.h"

#include <algorithm>

#include "text/bgen_index.h"
#include "text/index_store.h"
#include "util/bytes.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

using formats::vcz::Store;
using formats::vcz::VariantBlock;

constexpr uint64_t kMaxString = 65535;    // 2-byte lengths (IDs, chromosome)
constexpr uint64_t kStoredBlock = 65535;  // the most a stored deflate block holds
// Flags: zlib-compressed genotype blocks (1), layout 2 (bits 2–5), sample identifiers (bit 31).
constexpr uint32_t kFlags = 1u | (2u << 2) | (1u << 31);
constexpr uint64_t kFirstBytes = 1000;  // what bgenix keeps of the file in its Metadata

uint32_t Adler32(const std::string& data) {
  uint32_t a = 1, b = 0;
  for (size_t at = 0; at < data.size();) {
    const size_t end =
        std::min(data.size(), at + 5552);  // zlib's NMAX: no overflow before the modulo
    for (; at < end; ++at) {
      a += static_cast<uint8_t>(data[at]);
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return (b << 16) | a;
}

// The genotype block of a variant: C (4), D (4), then the zlib stream: header, stored blocks,
// Adler-32.
uint64_t GenotypeBlockSize(uint64_t raw) {
  const uint64_t blocks = std::max<uint64_t>(1, (raw + kStoredBlock - 1) / kStoredBlock);
  return 8 + 2 + 5 * blocks + raw + 4;
}

// The strings of one biallelic record as the .bim has them: ID ('.' when missing), REF, ALT.
struct Identity {
  std::string id, ref, alt;
};

Identity IdentityOf(const VariantBlock& b, uint64_t row) {
  Identity r;
  if (b.id) {
    PlinkAppendStrings(b.id->strings, row * b.id->row_elems, b.id->row_elems, &r.id);
  } else {
    // GCC 12 at -O3 warns that assigning "." may memcpy overlapping ranges of 2^63 bytes: a false
    // positive of its -Wrestrict through std::string (GCC bug 105651), silenced here only.
#pragma GCC diagnostic push
#ifndef __clang__  // a GCC warning; clang (the fuzz build) has none of that name
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
    r.id = ".";
#pragma GCC diagnostic pop
  }
  PlinkAppendStrings(b.allele.strings, row * b.allele.row_elems, 1, &r.ref);
  r.alt = PlinkAltText(b.allele, row);
  return r;
}

// Identifying data of a layout-2 variant block: varid and rsid (both the VCF ID), chromosome (the
// VCF CHROM), position, K = 2, the two alleles.
void AppendIdentity(const Identity& id, const std::string& chrom, int64_t pos, std::string* out) {
  PutU16(out, id.id.size());
  out->append(id.id);
  PutU16(out, id.id.size());
  out->append(id.id);
  PutU16(out, chrom.size());
  out->append(chrom);
  PutU32(out, static_cast<uint64_t>(pos));
  PutU16(out, 2);
  PutU32(out, id.ref.size());
  out->append(id.ref);
  PutU32(out, id.alt.size());
  out->append(id.alt);
}

}  // namespace

Status BgenRefusal(const Store& store) {
  if (store.samples().size() >= (uint64_t{1} << 32))
    return UnsupportedError("more than 2^32 samples");
  for (const std::string& id : store.samples()) {
    if (id.size() > kMaxString) return UnsupportedError("a sample ID is longer than 65535 bytes");
  }
  return OkStatus();
}

BgenSource::BgenSource(std::shared_ptr<const PlinkPlan> plan, std::string name,
                       uint64_t target_chunk_bytes)
    : plan_(std::move(plan)), name_(std::move(name)) {
  const uint64_t ns = plan_->store().samples().size();
  ploidy_ = plan_->store().ploidy() == 1 ? 1 : 2;
  raw_size_ = 10 + ns + ns * ploidy_;
  rows_per_chunk_ =
      PlinkRowsPerChunk(plan_->store(), GenotypeBlockSize(raw_size_) + 64, target_chunk_bytes);
}

uint64_t BgenSource::ChunkCount() const {
  return 1 + (plan_->store().num_variants() + rows_per_chunk_ - 1) / rows_per_chunk_;
}

std::pair<uint64_t, uint64_t> BgenSource::Range(uint64_t k) const {
  const uint64_t v0 = (k - 1) * rows_per_chunk_;
  return {v0, std::min(v0 + rows_per_chunk_, plan_->store().num_variants())};
}

Result<uint64_t> BgenSource::VariantCount() const {
  std::call_once(count_once_, [this]() {
    uint64_t m = 0;
    for (uint64_t k = 1; k < ChunkCount(); ++k) {
      const auto [v0, v1] = Range(k);
      auto b = plan_->store().ReadParts(v0, v1, Store::kAllele);
      if (!b.ok()) {
        count_ = b.status();
        return;
      }
      for (uint64_t row = 0; row < b->count; ++row) m += PlinkBiallelic(b->allele, row);
    }
    count_ = m;
    if (m >= (uint64_t{1} << 32))
      count_ = UnsupportedError(Describe() + ": more than 2^32 biallelic records");
  });
  return count_;
}

Result<std::string> BgenSource::Header() const {
  ASSIGN_OR_RETURN(const uint64_t m, VariantCount());
  const auto& ids = plan_->store().samples();
  uint64_t sample_block = 8;
  for (const std::string& id : ids) sample_block += 2 + id.size();
  std::string out;
  PutU32(&out, 20 + sample_block);  // offset of the first variant block, from byte 4
  PutU32(&out, 20);                 // L_H: no free data area
  PutU32(&out, m);
  PutU32(&out, ids.size());
  out.append("bgen");
  PutU32(&out, kFlags);
  PutU32(&out, sample_block);
  PutU32(&out, ids.size());
  for (const std::string& id : ids) {
    PutU16(&out, id.size());
    out.append(id);
  }
  return out;
}

Status BgenSource::ForEachVariant(uint64_t k,
                                  const std::function<Status(const BgenVariant&)>& f) const {
  RETURN_IF_ERROR(plan_->Checked());
  const Store& s = plan_->store();
  const auto [v0, v1] = Range(k);
  ASSIGN_OR_RETURN(
      VariantBlock b,
      s.ReadParts(v0, v1, Store::kContig | Store::kPosition | Store::kId | Store::kAllele));
  const uint64_t genotypes = GenotypeBlockSize(raw_size_);
  for (uint64_t row = 0; row < b.count; ++row) {
    if (!PlinkBiallelic(b.allele, row)) continue;
    const Identity id = IdentityOf(b, row);
    const std::string& chrom = s.contigs()[PlinkInt(b.contig, row)];  // in range: Checked()
    if (id.id.size() > kMaxString || chrom.size() > kMaxString) {
      return UnsupportedError(s.Describe() + ": variant " + std::to_string(v0 + row) +
                              ": an ID or CHROM longer than 65535 bytes (BGEN cannot hold it)");
    }
    BgenVariant v{chrom, id.id, id.ref, id.alt, PlinkInt(b.position, row), 0};
    v.size = 2 * (2 + id.id.size()) + 2 + chrom.size() + 4 + 2 + 4 + id.ref.size() + 4 +
             id.alt.size() + genotypes;
    RETURN_IF_ERROR(f(v));
  }
  return OkStatus();
}

Result<std::optional<uint64_t>> BgenSource::MeasureChunk(uint64_t k) const {
  if (k == 0) {
    ASSIGN_OR_RETURN(std::string header, Header());
    return std::optional<uint64_t>(header.size());
  }
  uint64_t n = 0;
  RETURN_IF_ERROR(ForEachVariant(k, [&n](const BgenVariant& v) {
    n += v.size;
    return OkStatus();
  }));
  return std::optional<uint64_t>(n);
}

// One variant's probabilities from its .bed row (2-bit codes: 0 hom ALT, 1 missing, 2 het, 3 hom
// REF), allele 1 = REF: diploid P(REF/REF), P(REF/ALT); haploid P(REF). Missing: bit 7 of the
// ploidy byte and zero probabilities.
Status BgenSource::AppendGenotypes(const uint8_t* bed_row, std::string* raw,
                                   std::string* out) const {
  static constexpr uint8_t kDiploid[4][2] = {{0, 0}, {0, 0}, {0, 255}, {255, 0}};
  const uint64_t ns = plan_->store().samples().size();
  raw->assign(raw_size_, '\0');
  char* p = raw->data();
  const uint32_t n = static_cast<uint32_t>(ns);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  p[4] = 2, p[5] = 0, p[6] = static_cast<char>(ploidy_), p[7] = static_cast<char>(ploidy_);
  char* ploidy = p + 8;
  char* probs = p + 8 + ns + 2;
  p[8 + ns] = 0;      // unphased
  p[8 + ns + 1] = 8;  // bits per probability
  for (uint64_t s = 0; s < ns; ++s) {
    const uint8_t code = (bed_row[s / 4] >> (2 * (s % 4))) & 3;
    ploidy[s] = static_cast<char>(ploidy_ | (code == 1 ? 0x80 : 0));
    if (ploidy_ == 2) {
      probs[2 * s] = static_cast<char>(kDiploid[code][0]);
      probs[2 * s + 1] = static_cast<char>(kDiploid[code][1]);
    } else {
      probs[s] = static_cast<char>(code == 3 ? 255 : 0);
    }
  }
  PutU32(out, GenotypeBlockSize(raw_size_) - 4);  // C: what follows it
  PutU32(out, raw_size_);                         // D
  out->append("\x78\x01", 2);
  for (uint64_t at = 0; at < raw_size_; at += kStoredBlock) {  // raw_size_ ≥ 10
    const uint64_t len = std::min(kStoredBlock, raw_size_ - at);
    out->push_back(at + len == raw_size_ ? 1 : 0);  // BFINAL, BTYPE 00 (stored)
    PutU16(out, len);
    PutU16(out, ~len & 0xffff);
    out->append(*raw, at, len);
  }
  const uint32_t adler = Adler32(*raw);
  for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>((adler >> (8 * i)) & 0xff));
  return OkStatus();
}

Status BgenSource::RenderChunk(uint64_t k, std::string* out) const {
  if (k == 0) {
    ASSIGN_OR_RETURN(std::string header, Header());
    out->append(header);
    return OkStatus();
  }
  RETURN_IF_ERROR(plan_->Checked());
  const Store& s = plan_->store();
  const auto [v0, v1] = Range(k);
  const unsigned parts =
      Store::kContig | Store::kPosition | Store::kId | Store::kAllele | Store::kGenotype;
  ASSIGN_OR_RETURN(VariantBlock b, s.ReadParts(v0, v1, parts));
  std::string bed, raw;
  RETURN_IF_ERROR(PlinkBedRows(s, b, &bed));
  const uint64_t row_bytes = (s.samples().size() + 3) / 4;
  const auto* next = reinterpret_cast<const uint8_t*>(bed.data());
  for (uint64_t row = 0; row < b.count; ++row) {
    if (!PlinkBiallelic(b.allele, row)) continue;
    const Identity id = IdentityOf(b, row);
    const std::string& chrom = s.contigs()[PlinkInt(b.contig, row)];
    if (id.id.size() > kMaxString || chrom.size() > kMaxString) {
      return UnsupportedError(s.Describe() + ": variant " + std::to_string(v0 + row) +
                              ": an ID or CHROM longer than 65535 bytes (BGEN cannot hold it)");
    }
    AppendIdentity(id, chrom, PlinkInt(b.position, row), out);
    RETURN_IF_ERROR(AppendGenotypes(next, &raw, out));
    next += row_bytes;
  }
  return OkStatus();
}

BgenSampleSource::BgenSampleSource(std::shared_ptr<const Store> store, std::string name)
    : store_(std::move(store)), name_(std::move(name)) {}

uint64_t BgenSampleSource::ChunkCount() const {
  return 1 + (store_->samples().size() + kSamplesPerChunk - 1) / kSamplesPerChunk;
}

Status BgenSampleSource::RenderChunk(uint64_t k, std::string* out) const {
  if (k == 0) {
    out->append("ID_1 ID_2 missing\n0 0 0\n");
    return OkStatus();
  }
  const auto& ids = store_->samples();
  const uint64_t end = std::min<uint64_t>(k * kSamplesPerChunk, ids.size());
  for (uint64_t i = (k - 1) * kSamplesPerChunk; i < end; ++i)
    out->append(ids[i]).append(" ").append(ids[i]).append(" 0\n");
  return OkStatus();
}

BgenIndexSource::BgenIndexSource(std::shared_ptr<const BgenSource> bgen, GwasViewOptions options,
                                 std::string bgen_name, std::string name)
    : bgen_(std::move(bgen)),
      options_(std::move(options)),
      bgen_name_(std::move(bgen_name)),
      name_(std::move(name)) {}

Status BgenIndexSource::RenderChunk(uint64_t, std::string* out) const {
  const bool persist = options_.index != nullptr && !options_.key.empty();
  const std::string key = options_.key + "\nbgen index " + name_;
  if (persist) {
    if (auto blob = options_.index->LoadBlob(key)) {
      out->append(*blob);
      return OkStatus();
    }
  }
  ASSIGN_OR_RETURN(std::string db, Build());
  if (persist) options_.index->SaveBlob(key, db);
  out->append(db);
  return OkStatus();
}

// Two passes over the identifying arrays: the file size (the Metadata row comes first), then the
// rows. The first 1000 bytes are rendered (the header and the first variant chunk or two).
Result<std::string> BgenIndexSource::Build() const {
  BgenIndexMetadata meta;
  meta.filename = bgen_name_;
  meta.last_write_time = meta.creation_time = options_.mtime;
  ASSIGN_OR_RETURN(meta.first_bytes, bgen_->Header());
  const uint64_t header = meta.first_bytes.size();
  std::vector<uint64_t> chunk_sizes;
  uint64_t size = header;
  for (uint64_t k = 1; k < bgen_->ChunkCount(); ++k) {
    ASSIGN_OR_RETURN(auto n, bgen_->MeasureChunk(k));
    chunk_sizes.push_back(*n);
    size += *n;
  }
  meta.file_size = size;
  for (uint64_t k = 1; k < bgen_->ChunkCount() && meta.first_bytes.size() < kFirstBytes; ++k) {
    RETURN_IF_ERROR(bgen_->RenderChunk(k, &meta.first_bytes));
  }
  if (meta.first_bytes.size() > kFirstBytes) meta.first_bytes.resize(kFirstBytes);
  ASSIGN_OR_RETURN(auto writer, BgenIndexWriter::Create(meta));
  uint64_t at = header;
  for (uint64_t k = 1; k < bgen_->ChunkCount(); ++k) {
    RETURN_IF_ERROR(bgen_->ForEachVariant(k, [&](const BgenVariant& v) {
      BgenIndexVariant row{v.chromosome, v.position, v.rsid, 2, v.allele1, v.allele2, at, v.size};
      at += v.size;
      return writer->Add(row);
    }));
  }
  if (at != size)
    return InternalError(Describe() + ": variant blocks add up to " + std::to_string(at) +
                         " bytes, not " + std::to_string(size));
  return writer->Finish();
}

}  // namespace omicsfs::text
