#include "formats/matrix.h"

namespace omicsfs::formats {

Status CheckChosen(const std::vector<uint32_t>& chosen, uint32_t n, const char* axis,
                   const std::string& where) {
  if (chosen.empty()) return InvalidArgumentError(where + ": no " + axis + " is chosen");
  std::vector<bool> seen(n);
  for (uint32_t i : chosen) {
    if (i >= n) {
      return InvalidArgumentError(where + ": " + axis + " " + std::to_string(i) +
                                  " is beyond the " + std::to_string(n) + " of the matrix");
    }
    if (seen[i])
      return InvalidArgumentError(where + ": " + axis + " " + std::to_string(i) +
                                  " is chosen twice");
    seen[i] = true;
  }
  return OkStatus();
}

std::shared_ptr<const std::vector<std::string>> ChosenNames(const std::vector<std::string>& names,
                                                            const std::vector<uint32_t>& chosen,
                                                            const char* prefix) {
  auto out = std::make_shared<std::vector<std::string>>();
  out->reserve(chosen.size());
  for (uint32_t i : chosen)
    out->push_back(names.empty() ? prefix + std::to_string(uint64_t{i} + 1) : names[i]);
  return out;
}

}  // namespace omicsfs::formats
