// The datg store kind: NAME.datg beside NAME.rows.txt.gz and NAME.cols.txt.gz.
#pragma once

#include "vfs/kinds/kind.h"

namespace omicsfs::vfs {

const StoreKind& DatgKind();

}  // namespace omicsfs::vfs
