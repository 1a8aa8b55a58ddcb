// A pass over a view's record spans that is not a read (a region index's or a coverage track's
// own pass): the chunks' spans computed in batches on several threads, handed on in chunk order.
#pragma once

#include <cstdint>
#include <functional>

#include "text/record_source.h"
#include "util/status.h"

namespace omicsfs::text {

// Calls `consume(k, spans)` for every chunk k of `source`, in order, with the chunk's record
// spans, computed `threads` at a time (0: the hardware's). The first failure stops the pass: a
// chunk's error gets "chunk K" as context; consume's is returned as it is.
Status ForEachChunkSpans(const RecordSource& source, unsigned threads,
                         const std::function<Status(uint64_t, const ChunkSpans&)>& consume);

}  // namespace omicsfs::text
