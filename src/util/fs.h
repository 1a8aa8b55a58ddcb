// The single place that picks the filesystem library: Boost.Filesystem (design card).
#pragma once

#include <boost/filesystem.hpp>

namespace omicsfs {
namespace fs = boost::filesystem;
using fs_error = boost::system::error_code;
}  // namespace omicsfs
