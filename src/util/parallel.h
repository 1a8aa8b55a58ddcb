// ParallelFor: run n independent tasks on up to `width` threads, the caller's among them, and
// wait for all of them. For readers whose tasks wait on round trips (the arrays of a Zarr record
// range fetched from S3): latency overlaps, and the caller's thread is never idle. The other
// threads come from one process-wide pool of 16, started at the first use (and again in a child
// after fork); a batch never waits for a pool thread to start: the caller takes what is left.
#pragma once

#include <cstddef>
#include <functional>

#include "util/status.h"

namespace omicsfs {

// Calls task(i) once for every i in [0, n): on the calling thread alone when width <= 1 or n <= 1
// (in order, stopping at the first failure), else on the caller's thread and up to
// min(width, n) - 1 pool threads pulling indices in order. Returns the failure of the lowest index
// that failed, or OK; once a task has failed, tasks not yet started are skipped. An exception
// escaping a task becomes an InternalError.
Status ParallelFor(size_t n, unsigned width, const std::function<Status(size_t)>& task);

}  // namespace omicsfs
