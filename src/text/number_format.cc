#include "text/number_format.h"

namespace omicsfs::text {

void AppendUInt(std::string* out, uint64_t v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteUInt(buf, v));
}
void AppendFloat(std::string* out, float v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteFloat(buf, v));
}
void AppendDouble(std::string* out, double v) {
  char buf[kMaxNumberChars];
  out->append(buf, WriteDouble(buf, v));
}

}  // namespace omicsfs::text
