#include "formats/vcz/store.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cache/cache_pool.h"
#include "io/local/local_space.h"
#include "io/space_blob_store.h"
#include "util/parallel.h"

namespace omicsfs::formats::vcz {
namespace {

using json = nlohmann::json;
using zarr::DType;

Result<json> RootAttributes(const io::BlobStore& blobs) {
  // v3's zarr.json, else v2's .zgroup and .zattrs, fetched together (a remote store: one round
  // trip, not three one after another).
  auto got = io::GetAll(blobs, {"zarr.json", ".zgroup", ".zattrs"}, blobs.Parallelism());
  try {
    ASSIGN_OR_RETURN(auto v3, std::move(got[0]));
    if (v3) {
      json j = json::parse(*v3);
      if (j.value("node_type", "") != "group") return CorruptError("zarr.json: not a group");
      return j.contains("attributes") ? j["attributes"] : json::object();
    }
    ASSIGN_OR_RETURN(auto group, std::move(got[1]));
    if (!group) return NotFoundError("not a Zarr group");
    ASSIGN_OR_RETURN(auto attrs, std::move(got[2]));
    return attrs ? json::parse(*attrs) : json::object();
  } catch (const std::exception& e) {
    return CorruptError(std::string("group attributes: ") + e.what());
  }
}

bool IsReserved(const std::string& name) {
  static const char* kReserved[] = {"variant_contig",  "variant_position", "variant_length",
                                    "variant_id",      "variant_id_mask",  "variant_allele",
                                    "variant_quality", "variant_filter"};
  for (const char* r : kReserved) {
    if (name == r) return true;
  }
  return false;
}

bool EndsWith(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The strings of `a`, read whole into `b`.
Result<std::vector<std::string>> StringsOf(const zarr::ZarrArray& a, zarr::DenseBlock&& b) {
  if (!zarr::IsString(a.meta().dtype) || a.meta().shape.size() != 1) {
    return CorruptError("array " + a.path() + " must be a 1-D string array");
  }
  return std::move(b.strings);
}

std::string VcfType(const zarr::ArrayMetadata& m) {
  switch (m.dtype) {
    case DType::kBool:
      return "Flag";
    case DType::kFloat32:
    case DType::kFloat64:
      return "Float";
    case DType::kFixedBytes:
      return m.item_size == 1 ? "Character" : "String";
    case DType::kFixedUnicode:
      return m.item_size == 4 ? "Character" : "String";
    case DType::kVlenString:
      return "String";
    default:
      return "Integer";
  }
}

Result<std::string> VcfNumber(const std::string& category, const std::string& key,
                              const zarr::ArrayMetadata& m) {
  const auto& dims = m.dimension_names;
  if (m.dtype == DType::kBool) return std::string("0");
  if (category == "INFO" && dims.size() == 1) return std::string("1");
  if (category == "FORMAT" && dims.size() == 2) return std::string("1");
  const std::string& last = dims.back();
  if (last == "alt_alleles") return std::string("A");
  if (last == "alleles") return std::string("R");
  if (last == "genotypes") return std::string("G");
  if (last == category + "_" + key + "_dim") return std::to_string(m.shape.back());
  return UnsupportedError("cannot determine the VCF Number of " + category + "/" + key +
                          " from dimension '" + last + "'");
}

}  // namespace

// Attributes of a VCF Zarr store's root (what Looks tests).
bool VczAttributes(const Result<json>& attrs) {
  return attrs.ok() && attrs->is_object() && attrs->contains("vcf_zarr_version");
}

bool Store::Looks(const io::BlobStore& blobs) { return VczAttributes(RootAttributes(blobs)); }

Result<std::shared_ptr<const Store>> Store::Open(const std::string& dir, ChangeGuard guard,
                                                 cache::CachePool* pool) {
  return Open(
      std::make_shared<io::SpaceBlobStore>(std::make_shared<io::LocalByteSpace>(dir, guard)), pool);
}

Result<std::shared_ptr<const Store>> Store::Open(std::shared_ptr<const io::BlobStore> blobs,
                                                 cache::CachePool* pool) {
  ASSIGN_OR_RETURN(json attrs, RootAttributes(*blobs));
  return OpenWith(std::move(blobs), pool, attrs);
}

Result<std::shared_ptr<const Store>> Store::OpenIfVcz(std::shared_ptr<const io::BlobStore> blobs,
                                                      cache::CachePool* pool) {
  auto attrs = RootAttributes(*blobs);
  if (!VczAttributes(attrs)) return std::shared_ptr<const Store>();
  return OpenWith(std::move(blobs), pool, *attrs);
}

Result<std::shared_ptr<const Store>> Store::OpenWith(std::shared_ptr<const io::BlobStore> blobs,
                                                     cache::CachePool* pool, const json& attrs) {
  std::shared_ptr<Store> s(new Store());
  const std::string dir = blobs->Describe();
  s->dir_ = dir;
  s->blobs_ = std::move(blobs);
  try {
    if (!attrs.contains("vcf_zarr_version"))
      return UnsupportedError(dir + ": no vcf_zarr_version attribute");
    if (attrs.contains("source") && attrs["source"].is_string())
      s->source_ = attrs["source"].get<std::string>();
    if (attrs.contains("vcf_header") && attrs["vcf_header"].is_string())
      s->vcf_header_ = attrs["vcf_header"].get<std::string>();
    if (attrs.contains("vcf_meta_information")) {
      for (const auto& kv : attrs["vcf_meta_information"])
        s->meta_.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    }
  } catch (const std::exception& e) {
    return CorruptError(dir + ": group attributes: " + e.what());
  }

  // Arrays: every child with Zarr array metadata (consolidated metadata is never required).
  ASSIGN_OR_RETURN(std::vector<std::string> children, s->blobs_->List(""));
  std::erase_if(children, [](const std::string& name) {
    return name.empty() || name[0] == '.' || name == "zarr.json";
  });
  std::vector<std::optional<zarr::ZarrArray>> opened(children.size());
  // A remote store's: every child's metadata objects fetched at once (20 arrays: 2 rounds of
  // requests in flight, not 20 arrays' two rounds each, 8 at a time); a local one's in order.
  const unsigned width = s->blobs_->Parallelism();
  std::vector<Result<std::optional<std::string>>> objects;
  if (width > 1) {
    std::vector<std::string> keys;
    for (const std::string& child : children) {
      for (const char* k : zarr::ZarrArray::kMetadataKeys) keys.push_back(child + "/" + k);
    }
    objects = io::GetAll(*s->blobs_, keys, 2 * width);
  }
  for (size_t i = 0; i < children.size(); ++i) {
    auto a = width > 1 ? zarr::ZarrArray::FromMetadataObjects(
                             s->blobs_, children[i],
                             {std::move(objects[3 * i]), std::move(objects[3 * i + 1]),
                              std::move(objects[3 * i + 2])})
                       : zarr::ZarrArray::Open(s->blobs_, children[i]);
    if (!a.ok()) {
      if (a.status().code() == ErrorCode::kNotFound) continue;  // a plain file or subgroup
      return std::move(a).status().WithContext(dir);
    }
    opened[i] = std::move(a).value();
  }
  std::map<std::string, zarr::ZarrArray> arrays;
  for (size_t i = 0; i < children.size(); ++i) {
    if (!opened[i]) continue;
    opened[i]->UseCache(pool);
    arrays.emplace(children[i], std::move(*opened[i]));
  }
  auto take = [&](const char* name) -> std::optional<zarr::ZarrArray> {
    auto it = arrays.find(name);
    if (it == arrays.end()) return std::nullopt;
    return it->second;
  };
  s->contig_ = take("variant_contig");
  s->position_ = take("variant_position");
  s->allele_ = take("variant_allele");
  if (!s->contig_ || !s->position_ || !s->allele_ || !arrays.count("contig_id")) {
    return CorruptError(
        dir +
        ": a VCF Zarr store needs variant_contig, variant_position, variant_allele and contig_id");
  }
  s->id_ = take("variant_id");
  s->length_ = take("variant_length");
  s->quality_ = take("variant_quality");
  s->filter_ = take("variant_filter");
  s->num_variants_ = s->position_->rows();
  // The small arrays the header needs, read together: from a remote store one round trip, not
  // five one after another (a fresh mount's first look at a store on S3 waits on them).
  enum { kContigs, kLengths, kFilters, kDescriptions, kSamples, kSmall };
  const char* const small_names[kSmall] = {"contig_id", "contig_length", "filter_id",
                                           "filter_description", "sample_id"};
  std::vector<zarr::DenseBlock> small(kSmall);
  // With them, from a remote store, the first records' alleles (into the cache): the first read
  // of nearly every view needs them (the PLINK views' check for a biallelic record, `head`).
  const bool warm = width > 1 && pool != nullptr && s->num_variants_ > 0;
  RETURN_IF_ERROR(ParallelFor(kSmall + warm, width, [&](size_t i) -> Status {
    if (i == kSmall) {
      (void)s->allele_->ReadRows(0, std::min(s->num_variants_, s->allele_->meta().chunks[0]));
      return OkStatus();  // a failure is the first real read's to report
    }
    auto it = arrays.find(small_names[i]);
    if (it == arrays.end()) return OkStatus();
    ASSIGN_OR_RETURN(small[i], it->second.ReadAll());
    return OkStatus();
  }));
  ASSIGN_OR_RETURN(s->contigs_, StringsOf(arrays.at("contig_id"), std::move(small[kContigs])));
  if (auto a = take("contig_length")) {
    zarr::DenseBlock b = std::move(small[kLengths]);
    if (!zarr::IsSignedInt(b.dtype) && !zarr::IsUnsignedInt(b.dtype))
      return CorruptError(dir + ": contig_length must be integers");
    std::vector<int64_t> lengths;
    for (uint64_t i = 0; i < b.rows; ++i) {
      int64_t v = 0;
      std::memcpy(&v, b.raw() + i * b.elem_size, b.elem_size);
      if (b.elem_size < 8 && zarr::IsSignedInt(b.dtype) && (v >> (8 * b.elem_size - 1)) & 1)
        v |= ~int64_t{0} << (8 * b.elem_size);
      lengths.push_back(v);
    }
    s->contig_lengths_ = std::move(lengths);
  }
  if (auto a = take("filter_id")) {
    ASSIGN_OR_RETURN(s->filters_, StringsOf(*a, std::move(small[kFilters])));
  } else {
    s->filters_ = {"PASS"};
  }
  if (auto a = take("filter_description")) {
    ASSIGN_OR_RETURN(s->filter_descriptions_, StringsOf(*a, std::move(small[kDescriptions])));
  }
  if (auto a = take("sample_id")) {
    ASSIGN_OR_RETURN(s->samples_, StringsOf(*a, std::move(small[kSamples])));
  }
  s->genotype_ = take("call_genotype");
  s->phased_ = take("call_genotype_phased");
  s->region_index_ = take("region_index");

  for (auto& [name, a] : arrays) {
    const auto& dims = a.meta().dimension_names;
    if (a.meta().shape.size() != dims.size() && !dims.empty())
      return CorruptError(dir + ": array " + name + ": dimension names do not match the shape");
    if (dims.empty() || EndsWith(name, "_fill") || EndsWith(name, "_mask")) continue;
    std::string category, key;
    if (name.rfind("variant_", 0) == 0 && !IsReserved(name) && dims[0] == "variants") {
      category = "INFO";
      key = name.substr(8);
    } else if (name.rfind("call_", 0) == 0 && dims.size() >= 2 && dims[0] == "variants" &&
               dims[1] == "samples" && name != "call_genotype" && name != "call_genotype_phased") {
      category = "FORMAT";
      key = name.substr(5);
    } else {
      continue;
    }
    Field f{key, a, "", VcfType(a.meta()), a.meta().attributes.value("description", "")};
    auto number = VcfNumber(category, key, a.meta());
    if (!number.ok()) return std::move(number).status().WithContext(dir);
    f.number = *number;
    if (a.rows() != s->num_variants_)
      return CorruptError(dir + ": array " + name + " has " + std::to_string(a.rows()) +
                          " rows, variant_position " + std::to_string(s->num_variants_));
    (category == "INFO" ? s->info_ : s->format_).push_back(std::move(f));
  }
  // Shapes of the fixed arrays, and the record range size.
  s->range_rows_ = s->num_variants_ ? s->num_variants_ : 1;
  auto consider = [&](const zarr::ZarrArray& a) {
    s->range_rows_ = std::min(s->range_rows_, a.meta().chunks[0]);
  };
  for (auto* a : {&s->contig_, &s->position_, &s->allele_, &s->id_, &s->quality_, &s->filter_,
                  &s->genotype_, &s->phased_}) {
    if (*a) {
      if ((*a)->rows() != s->num_variants_)
        return CorruptError(dir + ": array " + (*a)->path() +
                            " disagrees with variant_position on the number of variants");
      consider(**a);
    }
  }
  for (const auto& f : s->info_) consider(f.array);
  for (const auto& f : s->format_) consider(f.array);
  // Per-sample arrays: (variants, samples[, ...]) with exactly one column per sample_id.
  auto check_samples = [&](const zarr::ZarrArray& a, size_t rank) -> Status {
    const auto& shape = a.meta().shape;
    if ((rank != 0 && shape.size() != rank) || shape.size() < 2 || shape[1] != s->samples_.size()) {
      std::string dims;
      for (uint64_t d : shape) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
      return CorruptError(dir + ": array " + a.path() + " has shape " + dims +
                          ", expected (variants, " + std::to_string(s->samples_.size()) +
                          " samples" +
                          (rank == 3   ? ", ploidy)"
                           : rank == 2 ? ")"
                                       : ", ...)"));
    }
    return OkStatus();
  };
  if (s->genotype_) RETURN_IF_ERROR(check_samples(*s->genotype_, 3));
  if (s->phased_) RETURN_IF_ERROR(check_samples(*s->phased_, 2));
  for (const auto& f : s->format_) RETURN_IF_ERROR(check_samples(f.array, 0));
  return std::shared_ptr<const Store>(std::move(s));
}

Result<VariantBlock> Store::Read(uint64_t v0, uint64_t v1, bool with_samples, bool reverse) const {
  if (root_) return ReadSlice(v0, v1, with_samples, kEverything, reverse);
  VariantBlock b;
  b.first = v0;
  b.count = v1 - v0;
  std::vector<std::pair<const zarr::ZarrArray*, zarr::DenseBlock*>> reads = {
      {&*contig_, &b.contig}, {&*position_, &b.position}, {&*allele_, &b.allele}};
  auto optional = [&](const std::optional<zarr::ZarrArray>& a,
                      std::optional<zarr::DenseBlock>* out) {
    if (a) reads.emplace_back(&*a, &out->emplace());
  };
  optional(id_, &b.id);
  optional(quality_, &b.quality);
  optional(filter_, &b.filter);
  b.info.resize(info_.size());
  for (size_t i = 0; i < info_.size(); ++i) reads.emplace_back(&info_[i].array, &b.info[i]);
  if (with_samples && !samples_.empty()) {
    optional(genotype_, &b.genotype);
    optional(phased_, &b.phased);
    b.format.resize(format_.size());
    for (size_t i = 0; i < format_.size(); ++i) reads.emplace_back(&format_[i].array, &b.format[i]);
  }
  if (reverse) std::reverse(reads.begin(), reads.end());
  RETURN_IF_ERROR(ReadArrays(reads, v0, v1));
  return b;
}

Result<VariantBlock> Store::ReadParts(uint64_t v0, uint64_t v1, unsigned parts) const {
  if (root_) return ReadSlice(v0, v1, false, parts, false);
  VariantBlock b;
  b.first = v0;
  b.count = v1 - v0;
  std::vector<std::pair<const zarr::ZarrArray*, zarr::DenseBlock*>> reads;
  if (parts & kContig) reads.emplace_back(&*contig_, &b.contig);
  if (parts & kPosition) reads.emplace_back(&*position_, &b.position);
  if ((parts & kId) && id_) reads.emplace_back(&*id_, &b.id.emplace());
  if (parts & kAllele) reads.emplace_back(&*allele_, &b.allele);
  if ((parts & kLength) && length_) reads.emplace_back(&*length_, &b.length.emplace());
  if ((parts & kGenotype) && genotype_ && !samples_.empty())
    reads.emplace_back(&*genotype_, &b.genotype.emplace());
  if ((parts & kQuality) && quality_) reads.emplace_back(&*quality_, &b.quality.emplace());
  if ((parts & kFilter) && filter_) reads.emplace_back(&*filter_, &b.filter.emplace());
  if (parts & kInfo) {
    b.info.resize(info_.size());
    for (size_t i = 0; i < info_.size(); ++i) reads.emplace_back(&info_[i].array, &b.info[i]);
  }
  if ((parts & kFormat) && !samples_.empty()) {
    b.format.resize(format_.size());
    for (size_t i = 0; i < format_.size(); ++i) reads.emplace_back(&format_[i].array, &b.format[i]);
  }
  RETURN_IF_ERROR(ReadArrays(reads, v0, v1));
  return b;
}

unsigned Store::ReadWidth(const std::vector<const zarr::ZarrArray*>& arrays, uint64_t r0,
                          uint64_t r1) const {
  const unsigned width = blobs_->Parallelism();
  if (width > 1 || cache::CachePool::InNotReads()) return width;
  for (const zarr::ZarrArray* a : arrays) {
    if (!a->Cached(r0, r1)) return std::max(1u, std::thread::hardware_concurrency());
  }
  return width;
}

Status Store::ReadArrays(
    const std::vector<std::pair<const zarr::ZarrArray*, zarr::DenseBlock*>>& reads, uint64_t v0,
    uint64_t v1) const {
  // Local arrays are read in order on this thread (a read costs no round trip) unless their
  // chunks must be decoded first; remote ones concurrently, so that a record range costs about
  // one round trip, not one per array (ReadWidth).
  std::vector<const zarr::ZarrArray*> arrays;
  for (const auto& read : reads) arrays.push_back(read.first);
  const unsigned width = ReadWidth(arrays, v0, v1);
  const cache::CachePool::HandOff hand_off;
  return ParallelFor(reads.size(), width, [&](size_t i) -> Status {
    cache::CachePool::Carry scope(hand_off);
    ASSIGN_OR_RETURN(*reads[i].second, reads[i].first->ReadRows(v0, v1));
    return OkStatus();
  });
}

}  // namespace omicsfs::formats::vcz
