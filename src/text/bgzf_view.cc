#include "text/bgzf_view.h"

#include <algorithm>
#include <cstring>

#include "codec/bgzf.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

namespace bgzf = codec::bgzf;

template <size_t N>
cache::Buffer BufferOf(const std::array<uint8_t, N>& bytes) {
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(bytes.data()), N);
}

const cache::Buffer& FullHeader() {
  static const cache::Buffer b = BufferOf(bgzf::StoredHeader(bgzf::kBlockPayload));
  return b;
}
const cache::Buffer& EofBlock() {
  static const cache::Buffer b = BufferOf(bgzf::kEofBlock);
  return b;
}

// Walks the inner view's pieces of text [start, …) in increasing text offsets.
class PieceCursor {
 public:
  PieceCursor(const std::vector<Piece>& pieces, uint64_t start) : pieces_(pieces), start_(start) {}
  // Appends the slices of text [from, to) to out.
  void Slice(uint64_t from, uint64_t to, std::vector<Piece>* out) {
    Seek(from);
    size_t i = i_;
    uint64_t at = at_;
    while (from < to && i < pieces_.size()) {
      const Piece& p = pieces_[i];
      const uint64_t skip = from - at, take = std::min<uint64_t>(p.length - skip, to - from);
      out->push_back(Piece{p.buffer, p.offset + skip, static_cast<size_t>(take)});
      from += take;
      at += p.length;
      ++i;
    }
  }
  // CRC-32 of text [from, to).
  uint32_t Crc(uint64_t from, uint64_t to) {
    std::vector<Piece> parts;
    Slice(from, to, &parts);
    uint32_t crc = 0;
    for (const Piece& p : parts) crc = bgzf::Crc32(crc, p.buffer->data() + p.offset, p.length);
    return crc;
  }

 private:
  void Seek(uint64_t pos) {  // to the piece holding pos (never backwards past it)
    if (pos < at_) i_ = 0, at_ = start_;
    while (i_ < pieces_.size() && at_ + pieces_[i_].length <= pos) at_ += pieces_[i_++].length;
  }
  const std::vector<Piece>& pieces_;
  uint64_t start_;
  size_t i_ = 0;
  uint64_t at_ = start_;
};

// Appends bytes [from, to) of a block part laid out at file offset `base` with contents `buf`.
void Clip(const cache::Buffer& buf, size_t buf_offset, uint64_t base, uint64_t len, uint64_t from,
          uint64_t to, std::vector<Piece>* out) {
  const uint64_t lo = std::max(from, base), hi = std::min(to, base + len);
  if (lo < hi) out->push_back(Piece{buf, buf_offset + (lo - base), static_cast<size_t>(hi - lo)});
}

}  // namespace

BgzfStoredView::BgzfStoredView(std::shared_ptr<const ByteView> plain, std::string name,
                               bgzf::StoredLayout layout)
    : plain_(std::move(plain)), describe_(std::move(name)), layout_(layout) {}

Result<uint64_t> BgzfStoredView::Size() const {
  ASSIGN_OR_RETURN(uint64_t text, plain_->Size());
  return layout_.FileSize(text);
}

std::optional<uint32_t> BgzfStoredView::CachedCrc(uint64_t b) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t page = b / kCrcPage;
  if (page >= crc_pages_.size() || !crc_pages_[page]) return std::nullopt;
  const uint64_t v = crc_pages_[page][b % kCrcPage];
  if (v == 0) return std::nullopt;
  return static_cast<uint32_t>(v);
}

void BgzfStoredView::KeepCrc(uint64_t b, uint32_t crc) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t page = b / kCrcPage;
  if (page >= crc_pages_.size()) crc_pages_.resize(page + 1);
  if (!crc_pages_[page]) crc_pages_[page] = std::make_unique<uint64_t[]>(kCrcPage);
  crc_pages_[page][b % kCrcPage] = (uint64_t{1} << 32) | crc;
}

Result<std::vector<Piece>> BgzfStoredView::Read(uint64_t offset, uint64_t length) const {
  ASSIGN_OR_RETURN(const uint64_t text, plain_->Size());
  const bgzf::StoredLayout& lay = layout_;
  const uint64_t size = lay.FileSize(text);
  std::vector<Piece> out;
  if (offset >= size || length == 0) return out;
  const uint64_t end = offset + std::min(length, size - offset);
  const uint64_t blocks = lay.Blocks(text), data_end = lay.DataEnd(text);
  // The blocks touched and the text their payload parts need; a trailer needs the whole payload
  // of its block (unless its CRC is known): only the first block's may start before `offset`.
  const uint64_t b0 = lay.BlockAt(std::min(offset, data_end));
  const uint64_t b1 = end > data_end ? blocks : lay.BlockAt(end - 1) + 1;  // exclusive
  auto payload_at = [&lay](uint64_t b) { return lay.BlockStart(b) + bgzf::kStoredHeaderSize; };
  uint64_t t0 = text, t1 = text;
  if (b0 < b1) {
    const uint64_t p0 = payload_at(b0);
    t0 = lay.BlockText(b0) + (offset > p0 ? offset - p0 : 0);
    const uint64_t trailer0 = p0 + lay.Payload(b0, text);
    if (end > trailer0 && !CachedCrc(b0)) t0 = lay.BlockText(b0);
    const uint64_t last = b1 - 1, pl = payload_at(last);
    t1 = std::min(lay.BlockText(last) + lay.Payload(last, text),
                  lay.BlockText(last) + (end > pl ? end - pl : 0));
    t0 = std::min(t0, t1);
  }
  std::vector<Piece> inner;
  if (t1 > t0) {
    auto r = plain_->Read(t0, t1 - t0);
    if (!r.ok()) return std::move(r).status().WithContext(describe_);
    inner = std::move(*r);
  }
  PieceCursor cursor(inner, t0);
  std::string gen;  // headers of short blocks and trailers, made here
  std::vector<std::pair<size_t, size_t>> gen_pieces;  // (index in out, offset in gen)
  auto add_gen = [&](const uint8_t* bytes, size_t n, uint64_t base) {
    const size_t before = out.size();
    Clip(nullptr, gen.size(), base, n, offset, end, &out);
    if (out.size() > before) gen_pieces.emplace_back(before, 0);
    gen.append(reinterpret_cast<const char*>(bytes), n);
  };
  for (uint64_t b = b0; b < b1; ++b) {
    const uint64_t base = lay.BlockStart(b), len = lay.Payload(b, text);
    const uint64_t tb = lay.BlockText(b);
    if (len == bgzf::kBlockPayload) {
      Clip(FullHeader(), 0, base, bgzf::kStoredHeaderSize, offset, end, &out);
    } else {
      add_gen(bgzf::StoredHeader(static_cast<uint32_t>(len)).data(), bgzf::kStoredHeaderSize, base);
    }
    const uint64_t pbase = base + bgzf::kStoredHeaderSize;
    const uint64_t lo = std::max(offset, pbase), hi = std::min(end, pbase + len);
    if (lo < hi) cursor.Slice(tb + (lo - pbase), tb + (hi - pbase), &out);
    if (end <= pbase + len) continue;  // the trailer is not read
    std::optional<uint32_t> crc = CachedCrc(b);
    if (!crc) {
      crc = cursor.Crc(tb, tb + len);
      KeepCrc(b, *crc);
    }
    add_gen(bgzf::Trailer(*crc, static_cast<uint32_t>(len)).data(), bgzf::kTrailerSize,
            pbase + len);
  }
  Clip(EofBlock(), 0, data_end, bgzf::kEofSize, offset, end, &out);
  if (!gen_pieces.empty()) {
    auto shared = std::make_shared<const std::string>(std::move(gen));
    for (auto& [i, unused] : gen_pieces) out[i].buffer = shared;
  }
  return out;
}

BgzfDeflatedView::BgzfDeflatedView(std::shared_ptr<const ByteView> plain, cache::CachePool* pool,
                                   std::string name)
    : plain_(std::move(plain)),
      pool_(pool),
      owner_(pool->NewOwnerId()),
      describe_(std::move(name)) {}

bool BgzfDeflatedView::SizeKnown() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_.has_value();
}

Result<cache::Buffer> BgzfDeflatedView::Compressed() const {
  auto buf =
      pool_->GetOrCompute({owner_, cache::CacheKind::kTextChunk, 0}, [&]() -> Result<std::string> {
        ASSIGN_OR_RETURN(uint64_t n, plain_->Size());
        ASSIGN_OR_RETURN(std::vector<Piece> pieces, plain_->Read(0, n));
        std::string all;
        all.reserve(n);
        for (const Piece& p : pieces) all.append(p.buffer->data() + p.offset, p.length);
        // Level 1: an index (a .tbi is mostly runs of repeated offsets) is ~2 % larger than at 6
        // and compresses ~4x faster; ls -l of a folder of cell groups compresses one per view.
        return bgzf::Compress(all, 1);
      });
  if (!buf.ok()) {
    Status st = std::move(buf).status();
    // The raw index view is named as this file is and has said what failed, and where.
    if (plain_->Describe() == describe_) return st;
    st = std::move(st).WithContext(describe_);
    LogError(st.message());
    return st;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (size_ && *size_ != (*buf)->size()) {
    return CorruptError(describe_ + ": compressed to " + std::to_string((*buf)->size()) +
                        " bytes, earlier to " + std::to_string(*size_));
  }
  size_ = (*buf)->size();
  return buf;
}

Result<uint64_t> BgzfDeflatedView::Size() const {
  ASSIGN_OR_RETURN(cache::Buffer b, Compressed());
  return b->size();
}

Result<std::vector<Piece>> BgzfDeflatedView::Read(uint64_t offset, uint64_t length) const {
  ASSIGN_OR_RETURN(cache::Buffer b, Compressed());
  std::vector<Piece> out;
  if (offset < b->size() && length > 0) {
    out.push_back(Piece{b, static_cast<size_t>(offset),
                        static_cast<size_t>(std::min<uint64_t>(length, b->size() - offset))});
  }
  return out;
}

}  // namespace omicsfs::text
