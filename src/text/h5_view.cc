#include "text/h5_view.h"

#include <algorithm>
#include <cstdio>

#include "codec/hash.h"
#include "text/index_store.h"
#include "text/prefetcher.h"
#include "util/log.h"

namespace omicsfs::text {
namespace {

// What the gaps between written metadata hold.
const cache::Buffer& Zeros() {
  static const cache::Buffer z = std::make_shared<const std::string>(size_t{64} << 10, '\0');
  return z;
}

std::string Hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

Result<cache::Buffer> CachingH5Renderer::Chunk(size_t d, uint64_t k) const {
  return pool_->GetOrCompute(Key(d, k), [&]() -> Result<std::string> {
    const uint64_t e = ChunkElements(d);
    std::string out;
    RETURN_IF_ERROR(Render(d, k * e, (k + 1) * e, &out));
    return out;
  });
}

void CachingH5Renderer::Warm(size_t d, uint64_t k) const {
  pool_->Warm(Key(d, k), [&]() -> Result<std::string> {
    const uint64_t e = ChunkElements(d);
    std::string out;
    RETURN_IF_ERROR(Render(d, k * e, (k + 1) * e, &out));
    return out;
  });
}

H5FileView::H5FileView(PlanFn plan, std::shared_ptr<const H5ArrayRenderer> renderer,
                       SizingOptions sizing, std::string describe)
    : plan_(std::move(plan)),
      renderer_(std::move(renderer)),
      sizing_(std::move(sizing)),
      describe_(std::move(describe)) {}

Result<std::unique_ptr<H5FileView::Image>> H5FileView::MakeImage() const {
  ASSIGN_OR_RETURN(io::h5::H5Plan plan, plan_());
  auto im = std::make_unique<Image>();
  const bool persist =
      sizing_.index != nullptr && sizing_.index->enabled() && !sizing_.index_key.empty();
  if (persist) {
    const std::string canonical = plan.Canonical();  // tens of MB for a million names: XXH3
    im->key =
        sizing_.index_key + "\nh5 plan " + Hex(codec::Hash64(canonical.data(), canonical.size()));
  }
  // The serialized image, kept whole: its segments are served from it (no copy of the names).
  std::optional<io::h5::H5Image::Located> made;
  if (persist) {
    if (auto blob = sizing_.index->LoadBlob(im->key)) {
      auto located = io::h5::H5Image::Locate(*blob);
      if (located.ok()) {
        made = std::move(located).value();
        im->serialized = std::make_shared<const std::string>(std::move(*blob));
      } else {
        LogWarning(describe_ + ": the image kept in index_dir is unreadable (" +
                   located.status().message() + "); made anew");
      }
    }
  }
  if (!made) {
    ASSIGN_OR_RETURN(io::h5::H5Image built, io::h5::BuildImage(plan, describe_));
    auto serialized = std::make_shared<const std::string>(built.Serialize());
    built = io::h5::H5Image();
    ASSIGN_OR_RETURN(made, io::h5::H5Image::Locate(*serialized));
    if (persist) sizing_.index->SaveBlob(im->key, *serialized);
    im->serialized = std::move(serialized);
  }
  im->size = made->size;
  im->segments = std::move(made->segments);
  size_t d = 0;
  for (const auto& ds : plan.datasets) {
    if (!ds.external) continue;
    if (d >= made->external.size())
      return CorruptError(describe_ + ": the image lacks external dataset " + ds.path);
    External e;
    e.path = ds.path;
    e.offset = made->external[d].offset;
    e.bytes = made->external[d].bytes;
    e.width = io::h5::TypeSize(ds.value.type);
    e.chunk_bytes = std::max<uint64_t>(1, renderer_->ChunkElements(d)) * e.width;
    if (e.bytes != ds.value.Elements() * e.width)
      return CorruptError(describe_ + ": the image's " + ds.path + " holds " +
                          std::to_string(e.bytes) + " bytes, the plan " +
                          std::to_string(ds.value.Elements() * e.width));
    im->externals.push_back(std::move(e));
    ++d;
  }
  if (d != made->external.size())
    return CorruptError(describe_ + ": the image has more external datasets than the plan");
  for (size_t i = 0; i < im->externals.size(); ++i) {
    if (im->externals[i].bytes > 0) im->by_offset.push_back(i);
  }
  std::sort(im->by_offset.begin(), im->by_offset.end(),
            [&](size_t a, size_t b) { return im->externals[a].offset < im->externals[b].offset; });
  return im;
}

Result<const H5FileView::Image*> H5FileView::EnsureImage() const {
  if (const Image* im = ready_.load(std::memory_order_acquire)) return im;
  std::lock_guard<std::mutex> lock(mu_);
  if (image_) return image_.get();
  if (!failed_.ok()) return failed_;
  Result<std::unique_ptr<Image>> made = [&]() -> Result<std::unique_ptr<Image>> {
    cache::CachePool::NotReads not_reads;
    try {
      return MakeImage();
    } catch (const std::bad_alloc&) {
      return Status(ErrorCode::kOutOfMemory, "out of memory");
    }
  }();
  if (!made.ok()) {
    Status st = made.status().WithContext(describe_);
    LogError(st.message());
    if (!IsTransient(st)) failed_ = st;
    return st;
  }
  image_ = std::move(made).value();
  ready_.store(image_.get(), std::memory_order_release);
  ahead_.assign(image_->externals.size(), {UINT64_MAX, 0});
  return image_.get();
}

Result<uint64_t> H5FileView::Size() const {
  ASSIGN_OR_RETURN(const Image* im, EnsureImage());
  return im->size;
}

Result<io::h5::H5Image::Extent> H5FileView::Extent(size_t d) const {
  ASSIGN_OR_RETURN(const Image* im, EnsureImage());
  if (d >= im->externals.size())
    return InvalidArgumentError(describe_ + ": no external dataset " + std::to_string(d));
  return io::h5::H5Image::Extent{im->externals[d].offset, im->externals[d].bytes};
}

Result<std::string> H5FileView::PersistedKey() const {
  ASSIGN_OR_RETURN(const Image* im, EnsureImage());
  return im->key;
}

Status H5FileView::ReadExternal(const Image& im, size_t d, uint64_t pos, uint64_t end,
                                std::vector<Piece>* out, uint64_t* next) const {
  const External& e = im.externals[d];
  const uint64_t k = (pos - e.offset) / e.chunk_bytes;
  const uint64_t chunk_start = e.offset + k * e.chunk_bytes;
  const uint64_t want = std::min(e.chunk_bytes, e.offset + e.bytes - chunk_start);
  auto buf = renderer_->Chunk(d, k);
  if (buf.ok() && (*buf)->size() != want) {
    buf = InternalError("chunk rendered to " + std::to_string((*buf)->size()) + " bytes, not " +
                        std::to_string(want));
  }
  if (!buf.ok()) {
    // Bytes of the file and elements of the array: what the reader asked for and where it lies.
    const uint64_t e0 = k * (e.chunk_bytes / e.width);
    Status st = buf.status().WithContext(
        describe_ + ": " + e.path + " elements [" + std::to_string(e0) + ", " +
        std::to_string(e0 + want / e.width) + ") at bytes [" + std::to_string(chunk_start) + ", " +
        std::to_string(chunk_start + want) + ")");
    LogError(st.message());
    return st;
  }
  const uint64_t in = pos - chunk_start;
  const uint64_t take = std::min(want - in, end - pos);
  out->push_back(Piece{*buf, static_cast<size_t>(in), static_cast<size_t>(take)});
  *next = pos + take;
  if (*next == end || *next == chunk_start + want) ReadAhead(im, d, k);
  return OkStatus();
}

// A reader going through an array in order gets the next chunks made in the background while it
// copies this one (as VirtualTextFile does for text); a lone or random read queues nothing.
void H5FileView::ReadAhead(const Image& im, size_t d, uint64_t k) const {
  if (sizing_.prefetcher == nullptr) return;
  const External& e = im.externals[d];
  const uint64_t chunks = (e.bytes + e.chunk_bytes - 1) / e.chunk_bytes;
  const uint64_t window = std::clamp<uint64_t>(sizing_.readahead_bytes / e.chunk_bytes, 1, 64);
  uint64_t from, to;
  {
    std::lock_guard<std::mutex> lock(ahead_mu_);
    auto& [last, queued] = ahead_[d];
    const bool sequential = last != UINT64_MAX && (k == last || k == last + 1);
    last = k;
    if (!sequential) return;
    from = std::max(queued, k + 1);
    to = std::min(chunks, k + 1 + window);
    if (from >= to) return;
    queued = to;
  }
  std::weak_ptr<const H5FileView> weak = weak_from_this();
  for (uint64_t j = from; j < to; ++j) {
    sizing_.prefetcher->Submit([weak, d, j] {
      if (auto self = weak.lock()) self->renderer_->Warm(d, j);
    });
  }
}

Result<std::vector<Piece>> H5FileView::Read(uint64_t offset, uint64_t length) const {
  ASSIGN_OR_RETURN(const Image* im, EnsureImage());
  std::vector<Piece> pieces;
  if (offset >= im->size || length == 0) return pieces;
  const uint64_t end = offset + std::min(length, im->size - offset);
  // The first external extent ending after `offset`.
  auto ext = std::lower_bound(im->by_offset.begin(), im->by_offset.end(), offset,
                              [&](size_t i, uint64_t at) {
                                const External& e = im->externals[i];
                                return e.offset + e.bytes <= at;
                              });
  // The first segment ending after `offset`.
  using At = io::h5::H5Image::Located::At;
  auto seg = std::lower_bound(im->segments.begin(), im->segments.end(), offset,
                              [](const At& s, uint64_t at) { return s.offset + s.length <= at; });
  for (uint64_t pos = offset; pos < end;) {
    if (ext != im->by_offset.end() && im->externals[*ext].offset <= pos) {
      RETURN_IF_ERROR(ReadExternal(*im, *ext, pos, end, &pieces, &pos));
      const External& e = im->externals[*ext];
      if (pos >= e.offset + e.bytes) ++ext;
      continue;
    }
    const uint64_t stop =
        std::min(end, ext != im->by_offset.end() ? im->externals[*ext].offset : end);
    while (seg != im->segments.end() && seg->offset + seg->length <= pos) ++seg;
    if (seg != im->segments.end() && seg->offset <= pos) {
      const uint64_t take = std::min(seg->offset + seg->length, stop) - pos;
      pieces.push_back(Piece{im->serialized, static_cast<size_t>(seg->at + (pos - seg->offset)),
                             static_cast<size_t>(take)});
      pos += take;
      continue;
    }
    const uint64_t gap_end = std::min(stop, seg != im->segments.end() ? seg->offset : stop);
    const uint64_t take = std::min<uint64_t>(gap_end - pos, Zeros()->size());
    pieces.push_back(Piece{Zeros(), 0, static_cast<size_t>(take)});
    pos += take;
  }
  return pieces;
}

}  // namespace omicsfs::text
