#include "vfs/kinds/registry.h"

#include <algorithm>

#include "vfs/kinds/anndata.h"
#include "vfs/kinds/bpcells.h"
#include "vfs/kinds/datg.h"
#include "vfs/kinds/vcz.h"

namespace omicsfs::vfs {

const std::vector<const StoreKind*>& Kinds() {
  static const std::vector<const StoreKind*> kinds = {
      &BpcellsDirKind(),      // a directory with a BPCells `version` file
      &VczDirKind(),          // a directory with .zgroup or zarr.json and VCF Zarr attributes
      &AnnDataZarrDirKind(),  // a directory with .zattrs or zarr.json saying anndata
      &DatgKind(),            // NAME.datg
      &VczZipKind(),          // NAME.vcz.zip, NAME.zarr.zip
      &AnnDataZarrZipKind(),  // NAME.zarr.zip holding AnnData
      &BpcellsHdf5Kind(),     // an HDF5 file with BPCells store groups
      &AnnDataHdf5Kind(),     // an HDF5 file whose root's encoding-type is anndata
  };
  return kinds;
}

std::vector<std::string> FixedStoreKeys() {
  std::vector<std::string> out;
  for (const StoreKind* k : Kinds()) {
    for (auto& key : k->FixedKeys()) out.push_back(std::move(key));
  }
  return out;
}

std::vector<std::string> Hdf5StoreMarks() {
  std::vector<std::string> out;
  for (const StoreKind* k : Kinds()) {
    for (auto& mark : k->Hdf5StoreMarks()) {
      if (std::find(out.begin(), out.end(), mark) == out.end()) out.push_back(std::move(mark));
    }
  }
  return out;
}

std::string KindsHelp() {
  std::string out;
  for (const StoreKind* k : Kinds()) {
    std::string line = "  " + k->Name();
    line.resize(std::max<size_t>(line.size() + 1, 32), ' ');
    line += k->RecognisedBy();
    out += line + "\n";
    std::string views = "      ->";
    for (const auto& v : k->ViewNames()) {
      if (views.size() + v.size() + 1 > 96) {
        out += views + "\n";
        views = "        ";
      }
      views += " " + v;
    }
    out += views + "\n";
    for (const auto& [sort, rows] : k->Slicing()) {
      out += "      slices" + (sort.empty() ? std::string() : " of " + sort) + ":\n" +
             RowsHelp(rows, "        ");
    }
  }
  out += "  anything else                 passed through read-only, byte for byte\n";
  out +=
      "  Slices are folders made on lookup inside a store's folder (and inside each other, in any\n"
      "  order): KEY=a,b,c inline, KEY=@NAME for the list LISTS/NAME.txt (.bed, .tsv as given "
      "above;\n"
      "  -o lists=DIR), KEY=^... for all but these. Each holds the store's views over the "
      "subset.\n";
  return out;
}

}  // namespace omicsfs::vfs
