// In-memory backend: for tests and for derived arrays.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/array_store.h"

namespace omicsfs::io {

class MemoryArrayStore : public ArrayStore {
 public:
  explicit MemoryArrayStore(std::string name = "memory") : name_(std::move(name)) {}

  void SetVersion(std::string v) { version_ = std::move(v); }
  template <typename T>
  void Put(const std::string& name, std::vector<T> values) {
    Blob b;
    b.type = ElemTypeOf<T>();
    b.length = values.size();
    b.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    arrays_[name] = std::move(b);
  }
  void PutStrings(const std::string& name, std::vector<std::string> values) {
    Blob b;
    b.type = ElemType::kString;
    b.length = values.size();
    b.strings = std::move(values);
    arrays_[name] = std::move(b);
  }

  const std::string& Describe() const override { return name_; }
  Result<std::string> Version() const override;
  Result<std::optional<ArrayInfo>> Info(const std::string& name) const override;
  Status Read(const std::string& name, ElemType type, uint64_t first, uint64_t count,
              void* out) const override;
  Result<std::vector<std::string>> ReadStrings(const std::string& name) const override;

 private:
  struct Blob {
    ElemType type;
    uint64_t length;
    std::string bytes;
    std::vector<std::string> strings;
  };
  std::string name_;
  std::optional<std::string> version_;
  std::map<std::string, Blob> arrays_;
};

}  // namespace omicsfs::io
