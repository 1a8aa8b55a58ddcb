#include "text/bigwig_writer.h"

#include <libdeflate.h>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <memory>
#include <numeric>

namespace omicsfs::text {
namespace {

constexpr uint32_t kBigWigMagic = 0x888FFC26;
constexpr uint32_t kChromTreeMagic = 0x78CA8C91;
constexpr uint32_t kRTreeMagic = 0x2468ACE0;
constexpr uint32_t kItemsPerSlot = 1024;  // runs (or zoom records) per section
constexpr uint32_t kRTreeBlock = 256;     // children per R-tree node
constexpr int kMaxZooms = 10;

// Little-endian bytes appended, and patched where an offset is known only later.
class Bytes {
 public:
  template <class T>
  void Put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));  // x86-64 and aarch64: little-endian, as bigWig is written
    s_.append(b, sizeof(T));
  }
  template <class T>
  void PutAt(uint64_t at, T v) {
    std::memcpy(s_.data() + at, &v, sizeof(T));
  }
  void Zeros(size_t n) { s_.append(n, '\0'); }
  void Reserve(size_t n) { s_.reserve(n); }
  void Append(const char* p, size_t n) { s_.append(p, n); }
  uint64_t size() const { return s_.size(); }
  std::string& str() { return s_; }

 private:
  std::string s_;
};

// A section of the data or of a zoom level, as the R-tree indexes it.
struct Section {
  uint32_t chrom = 0, start = 0, end = 0;
  uint64_t offset = 0, size = 0;
};

struct ZoomRecord {
  uint32_t chrom, start, end, valid;
  float min, max, sum, sum_squares;
};

class Compressor {
 public:
  Compressor() : c_(libdeflate_alloc_compressor(1)) {}
  ~Compressor() {
    if (c_ != nullptr) libdeflate_free_compressor(c_);
  }
  bool ok() const { return c_ != nullptr; }
  // `raw` zlib-compressed onto `out`; its compressed size.
  uint64_t Put(const std::string& raw, Bytes* out) {
    buf_.resize(libdeflate_zlib_compress_bound(c_, raw.size()));
    const size_t n = libdeflate_zlib_compress(c_, raw.data(), raw.size(), buf_.data(), buf_.size());
    out->Append(buf_.data(), n);
    return n;
  }

 private:
  libdeflate_compressor* c_;
  std::string buf_;
};

// The R-tree of `sections` (in file order) at the end of `out`: its header, then its nodes from
// the root down to the leaves, each child's offset known from the sizes of the levels below.
void WriteRTree(const std::vector<Section>& sections, uint64_t data_end, Bytes* out) {
  // levels[0]: the leaves' groups of sections; levels[k]: groups of level k-1 nodes.
  struct Node {
    uint32_t first, count;  // children in the level below (sections for a leaf)
    uint32_t c0, b0, c1, b1;
  };
  std::vector<std::vector<Node>> levels;
  {
    std::vector<Node> leaves;
    for (uint32_t i = 0; i < sections.size() || leaves.empty(); i += kRTreeBlock) {
      const auto n = static_cast<uint32_t>(
          std::min<size_t>(kRTreeBlock, sections.size() > i ? sections.size() - i : 0));
      Node node{i, n, 0, 0, 0, 0};
      if (n > 0) {
        node.c0 = sections[i].chrom;
        node.b0 = sections[i].start;
        node.c1 = sections[i + n - 1].chrom;
        node.b1 = sections[i + n - 1].end;
      }
      leaves.push_back(node);
      if (sections.empty()) break;
    }
    levels.push_back(std::move(leaves));
  }
  while (levels.back().size() > 1) {
    const auto& below = levels.back();
    std::vector<Node> up;
    for (uint32_t i = 0; i < below.size(); i += kRTreeBlock) {
      const auto n = static_cast<uint32_t>(std::min<size_t>(kRTreeBlock, below.size() - i));
      up.push_back({i, n, below[i].c0, below[i].b0, below[i + n - 1].c1, below[i + n - 1].b1});
    }
    levels.push_back(std::move(up));
  }
  const Node& root = levels.back()[0];
  out->Put<uint32_t>(kRTreeMagic);
  out->Put<uint32_t>(kRTreeBlock);
  out->Put<uint64_t>(sections.size());
  out->Put<uint32_t>(root.c0);
  out->Put<uint32_t>(root.b0);
  out->Put<uint32_t>(root.c1);
  out->Put<uint32_t>(root.b1);
  out->Put<uint64_t>(data_end);
  out->Put<uint32_t>(kItemsPerSlot);
  out->Put<uint32_t>(0);
  // Where each level's nodes start: the root first.
  const auto node_size = [](const Node& n, bool leaf) {
    return 4 + uint64_t{n.count} * (leaf ? 32 : 24);
  };
  std::vector<std::vector<uint64_t>> at(levels.size());
  uint64_t pos = out->size();
  for (size_t k = levels.size(); k-- > 0;) {
    for (const Node& n : levels[k]) {
      at[k].push_back(pos);
      pos += node_size(n, k == 0);
    }
  }
  for (size_t k = levels.size(); k-- > 0;) {
    const bool leaf = k == 0;
    for (const Node& n : levels[k]) {
      out->Put<uint8_t>(leaf ? 1 : 0);
      out->Put<uint8_t>(0);
      out->Put<uint16_t>(static_cast<uint16_t>(n.count));
      for (uint32_t i = n.first; i < n.first + n.count; ++i) {
        if (leaf) {
          const Section& s = sections[i];
          out->Put<uint32_t>(s.chrom);
          out->Put<uint32_t>(s.start);
          out->Put<uint32_t>(s.chrom);
          out->Put<uint32_t>(s.end);
          out->Put<uint64_t>(s.offset);
          out->Put<uint64_t>(s.size);
        } else {
          const Node& c = levels[k - 1][i];
          out->Put<uint32_t>(c.c0);
          out->Put<uint32_t>(c.b0);
          out->Put<uint32_t>(c.c1);
          out->Put<uint32_t>(c.b1);
          out->Put<uint64_t>(at[k - 1][i]);
        }
      }
    }
  }
}

// A zoom bin being summed: its chromosome, its number (bins of `reduction` bases from 0), and
// sums in double (a coarser level is summed from the bins of the finer one: bins nest).
struct Bin {
  uint32_t chrom;
  uint64_t k, valid;
  float min, max;
  double sum, squares;
};

// The bins of `chroms` at `reduction` bases, from the runs.
std::vector<Bin> BinRuns(const std::vector<BigWigChrom>& chroms, uint64_t reduction) {
  std::vector<Bin> out;
  for (uint32_t c = 0; c < chroms.size(); ++c) {
    for (const BigWigRun& r : chroms[c].runs) {
      for (uint64_t b = r.begin; b < r.end;) {
        const uint64_t k = b / reduction;
        const uint64_t e = std::min<uint64_t>(r.end, (k + 1) * reduction);
        if (out.empty() || out.back().chrom != c || out.back().k != k)
          out.push_back({c, k, 0, r.value, r.value, 0, 0});
        Bin& bin = out.back();
        const double span = static_cast<double>(e - b);
        bin.valid += e - b;
        bin.min = std::min(bin.min, r.value);
        bin.max = std::max(bin.max, r.value);
        bin.sum += r.value * span;
        bin.squares += double{r.value} * r.value * span;
        b = e;
      }
    }
  }
  return out;
}

// The bins `factor` times coarser, summed from `finer`.
std::vector<Bin> Coarser(const std::vector<Bin>& finer, uint64_t factor) {
  std::vector<Bin> out;
  for (const Bin& f : finer) {
    const uint64_t k = f.k / factor;
    if (out.empty() || out.back().chrom != f.chrom || out.back().k != k) {
      out.push_back({f.chrom, k, f.valid, f.min, f.max, f.sum, f.squares});
      continue;
    }
    Bin& b = out.back();
    b.valid += f.valid;
    b.min = std::min(b.min, f.min);
    b.max = std::max(b.max, f.max);
    b.sum += f.sum;
    b.squares += f.squares;
  }
  return out;
}

// The records of bins of `reduction` bases (the last of a chromosome clipped to its size).
std::vector<ZoomRecord> Records(const std::vector<BigWigChrom>& chroms,
                                const std::vector<Bin>& bins, uint64_t reduction) {
  std::vector<ZoomRecord> out;
  out.reserve(bins.size());
  for (const Bin& b : bins) {
    out.push_back(
        {b.chrom, static_cast<uint32_t>(b.k * reduction),
         static_cast<uint32_t>(std::min<uint64_t>((b.k + 1) * reduction, chroms[b.chrom].size)),
         static_cast<uint32_t>(b.valid), b.min, b.max, static_cast<float>(b.sum),
         static_cast<float>(b.squares)});
  }
  return out;
}

}  // namespace

Result<std::string> WriteBigWig(const std::vector<BigWigChrom>& chroms) {
  Compressor z;
  if (!z.ok()) return InternalError("bigWig: no deflate compressor");
  Bytes out;
  uint32_t max_raw = 0;  // the largest section uncompressed: readers' buffer

  // What the zoom levels will be (their headers come first): bins of 10x the mean run span,
  // then 4x coarser each up to the longest chromosome, a level kept when it at least halves the
  // records of the level kept before it (sparse tracks skip the levels that would not).
  uint64_t runs = 0, bases = 0, longest = 1;
  for (const auto& c : chroms) {
    runs += c.runs.size();
    longest = std::max<uint64_t>(longest, c.size);
    for (const BigWigRun& r : c.runs) bases += r.end - r.begin;
  }
  std::vector<std::pair<uint32_t, std::vector<ZoomRecord>>> zooms;
  if (runs > 0) {
    uint64_t before = runs;
    uint64_t reduction = std::max<uint64_t>(10, bases / runs * 10);
    std::vector<Bin> bins = BinRuns(chroms, reduction);
    for (; zooms.size() < kMaxZooms && reduction < UINT32_MAX; reduction *= 4) {
      if (zooms.empty() || bins.size() * 2 <= before) {
        before = bins.size();
        zooms.emplace_back(static_cast<uint32_t>(reduction), Records(chroms, bins, reduction));
      }
      if (reduction >= longest) break;  // one bin per chromosome
      bins = Coarser(bins, 4);
    }
  }

  // Room for it all at once (sections deflate little: a track's bytes are mostly distinct
  // coordinates), not a string doubled and copied while it grows.
  {
    uint64_t records = 0;
    for (const auto& z : zooms) records += z.second.size();
    out.Reserve(4096 + chroms.size() * 64 + (runs * 12 + records * 32) * 11 / 10);
  }
  // Header (64 bytes; offsets patched below) and the zoom headers.
  out.Put<uint32_t>(kBigWigMagic);
  out.Put<uint16_t>(4);  // version
  out.Put<uint16_t>(static_cast<uint16_t>(zooms.size()));
  out.Zeros(64 - 8);
  const uint64_t zoom_headers = out.size();
  out.Zeros(24 * zooms.size());

  // Total summary.
  const uint64_t summary = out.size();
  {
    double lo = DBL_MAX, hi = -DBL_MAX, sum = 0, squares = 0;
    for (const auto& c : chroms) {
      for (const BigWigRun& r : c.runs) {
        const double span = r.end - r.begin;
        lo = std::min<double>(lo, r.value);
        hi = std::max<double>(hi, r.value);
        sum += r.value * span;
        squares += double{r.value} * r.value * span;
      }
    }
    out.Put<uint64_t>(bases);
    out.Put<double>(runs ? lo : 0);
    out.Put<double>(runs ? hi : 0);
    out.Put<double>(sum);
    out.Put<double>(squares);
  }

  // Chromosome B+ tree: one leaf, keys sorted bytewise (readers may search it).
  const uint64_t chrom_tree = out.size();
  {
    if (chroms.size() > 0xFFFF) return UnsupportedError("bigWig: more than 65 535 chromosomes");
    uint32_t key = 1;
    for (const auto& c : chroms)
      key = std::max<uint32_t>(key, static_cast<uint32_t>(c.name.size()));
    std::vector<uint32_t> order(chroms.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return chroms[a].name < chroms[b].name; });
    out.Put<uint32_t>(kChromTreeMagic);
    out.Put<uint32_t>(std::max<uint32_t>(1, static_cast<uint32_t>(chroms.size())));  // block
    out.Put<uint32_t>(key);
    out.Put<uint32_t>(8);  // value: ID and size
    out.Put<uint64_t>(chroms.size());
    out.Put<uint64_t>(0);
    out.Put<uint8_t>(1);  // leaf
    out.Put<uint8_t>(0);
    out.Put<uint16_t>(static_cast<uint16_t>(chroms.size()));
    for (uint32_t id : order) {
      const std::string& name = chroms[id].name;
      out.Append(name.data(), name.size());
      out.Zeros(key - name.size());
      out.Put<uint32_t>(id);
      out.Put<uint32_t>(chroms[id].size);
    }
  }

  // Data: the count of sections, then the sections (bedGraph items: start, end, value).
  const uint64_t data = out.size();
  out.Put<uint64_t>(0);
  std::vector<Section> sections;
  std::string raw;
  for (uint32_t c = 0; c < chroms.size(); ++c) {
    const auto& rs = chroms[c].runs;
    for (size_t i = 0; i < rs.size(); i += kItemsPerSlot) {
      const size_t n = std::min<size_t>(kItemsPerSlot, rs.size() - i);
      raw.clear();
      Bytes head;
      head.Put<uint32_t>(c);
      head.Put<uint32_t>(rs[i].begin);
      head.Put<uint32_t>(rs[i + n - 1].end);
      head.Put<uint32_t>(0);  // step
      head.Put<uint32_t>(0);  // span
      head.Put<uint8_t>(1);   // bedGraph items
      head.Put<uint8_t>(0);
      head.Put<uint16_t>(static_cast<uint16_t>(n));
      for (size_t j = i; j < i + n; ++j) {
        head.Put<uint32_t>(rs[j].begin);
        head.Put<uint32_t>(rs[j].end);
        head.Put<float>(rs[j].value);
      }
      raw.swap(head.str());
      max_raw = std::max<uint32_t>(max_raw, static_cast<uint32_t>(raw.size()));
      const uint64_t at = out.size();
      sections.push_back({c, rs[i].begin, rs[i + n - 1].end, at, z.Put(raw, &out)});
    }
  }
  out.PutAt<uint64_t>(data, sections.size());
  const uint64_t index = out.size();
  WriteRTree(sections, index, &out);

  // Zoom levels: a count, the records' sections, their R-tree.
  for (size_t level = 0; level < zooms.size(); ++level) {
    const auto& records = zooms[level].second;
    const uint64_t zoom_data = out.size();
    out.Put<uint32_t>(static_cast<uint32_t>(records.size()));
    std::vector<Section> zs;
    for (size_t i = 0; i < records.size();) {
      size_t j = i;
      while (j < records.size() && j - i < kItemsPerSlot && records[j].chrom == records[i].chrom)
        ++j;
      Bytes block;
      for (size_t k = i; k < j; ++k) {
        const ZoomRecord& r = records[k];
        block.Put<uint32_t>(r.chrom);
        block.Put<uint32_t>(r.start);
        block.Put<uint32_t>(r.end);
        block.Put<uint32_t>(r.valid);
        block.Put<float>(r.min);
        block.Put<float>(r.max);
        block.Put<float>(r.sum);
        block.Put<float>(r.sum_squares);
      }
      max_raw = std::max<uint32_t>(max_raw, static_cast<uint32_t>(block.size()));
      const uint64_t at = out.size();
      zs.push_back(
          {records[i].chrom, records[i].start, records[j - 1].end, at, z.Put(block.str(), &out)});
      i = j;
    }
    const uint64_t zoom_index = out.size();
    WriteRTree(zs, zoom_index, &out);
    const uint64_t h = zoom_headers + 24 * level;
    out.PutAt<uint32_t>(h, zooms[level].first);
    out.PutAt<uint32_t>(h + 4, 0);
    out.PutAt<uint64_t>(h + 8, zoom_data);
    out.PutAt<uint64_t>(h + 16, zoom_index);
  }

  out.PutAt<uint64_t>(8, chrom_tree);
  out.PutAt<uint64_t>(16, data);
  out.PutAt<uint64_t>(24, index);
  out.PutAt<uint16_t>(32, 0);  // fieldCount
  out.PutAt<uint16_t>(34, 0);  // definedFieldCount
  out.PutAt<uint64_t>(36, 0);  // autoSql
  out.PutAt<uint64_t>(44, summary);
  out.PutAt<uint32_t>(52, std::max<uint32_t>(max_raw, 1));  // uncompressBufSize: compressed
  out.PutAt<uint64_t>(56, 0);                               // no extension header
  // The end magic, as UCSC's writer leaves it.
  out.Put<uint32_t>(kBigWigMagic);
  return std::move(out.str());
}

}  // namespace omicsfs::text
