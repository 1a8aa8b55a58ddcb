// The elements of an AnnData Zarr store (v2: .zgroup/.zarray and .zattrs; v3: zarr.json), for
// the reader of formats/anndata/anndata.h.
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "formats/anndata/anndata.h"
#include "formats/zarr/array.h"

namespace omicsfs::formats::anndata {
namespace {

using zarr::DType;

std::optional<Number> NumberOf(DType t) {
  switch (t) {
    case DType::kBool:
      return Number::kBool;
    case DType::kInt8:
      return Number::kInt8;
    case DType::kInt16:
      return Number::kInt16;
    case DType::kInt32:
      return Number::kInt32;
    case DType::kInt64:
      return Number::kInt64;
    case DType::kUInt8:
      return Number::kUInt8;
    case DType::kUInt16:
      return Number::kUInt16;
    case DType::kUInt32:
      return Number::kUInt32;
    case DType::kUInt64:
      return Number::kUInt64;
    case DType::kFloat32:
      return Number::kFloat32;
    case DType::kFloat64:
      return Number::kFloat64;
    default:
      return std::nullopt;
  }
}

// Element i of a block as T (numbers converted as C++ converts them).
template <typename T>
void Convert(const zarr::DenseBlock& b, uint64_t n, T* out) {
  if (b.dtype == DType::kFloat32) {
    const float* f = b.data<float>();
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f[i]);
  } else if (b.dtype == DType::kFloat64) {
    const double* f = b.data<double>();
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f[i]);
  } else if (b.dtype == DType::kUInt64) {
    const uint64_t* u = b.data<uint64_t>();
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<T>(u[i]);
  } else {
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<T>(zarr::IntAt(b, i));
  }
}

struct Node {
  enum class Type { kNone, kGroup, kArray } type = Type::kNone;
  std::map<std::string, std::vector<std::string>, std::less<>> attributes;  // string ones
  std::optional<zarr::ZarrArray> array;
};

class ZarrTree final : public Elements {
 public:
  ZarrTree(std::shared_ptr<const io::BlobStore> store, cache::CachePool* pool)
      : store_(std::move(store)), pool_(pool), describe_(store_->Describe()) {}
  const std::string& Describe() const override { return describe_; }

  const std::string* Attribute(const std::string& group, std::string_view name) const override {
    auto n = Get(group);
    if (!n.ok()) return nullptr;
    auto it = (*n)->attributes.find(name);
    if (it == (*n)->attributes.end() || it->second.size() != 1) return nullptr;
    return &it->second[0];
  }
  std::vector<std::string> AttributeList(const std::string& group,
                                         std::string_view name) const override {
    auto n = Get(group);
    if (!n.ok()) return {};
    auto it = (*n)->attributes.find(name);
    return it == (*n)->attributes.end() ? std::vector<std::string>() : it->second;
  }
  bool IsGroup(const std::string& path) const override {
    auto n = Get(path);
    return n.ok() && (*n)->type == Node::Type::kGroup;
  }
  Result<std::vector<std::string>> Children(const std::string& group) const override {
    ASSIGN_OR_RETURN(std::vector<std::string> names, store_->List(Key(group)));
    std::vector<std::string> out;
    for (auto& name : names) {
      if (name.empty() || name[0] == '.' || name == "zarr.json") continue;
      if (!name.empty() && name.back() == '/') name.pop_back();
      ASSIGN_OR_RETURN(const Node* n, Get(Join(group, name)));
      if (n->type != Node::Type::kNone) out.push_back(std::move(name));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  Result<std::optional<ArrayDesc>> Array(const std::string& path) const override {
    ASSIGN_OR_RETURN(const Node* n, Get(path));
    if (n->type != Node::Type::kArray) return std::optional<ArrayDesc>();
    const zarr::ArrayMetadata& m = n->array->meta();
    ArrayDesc d;
    d.dims = m.shape;
    d.is_string = zarr::IsString(m.dtype);
    d.number = NumberOf(m.dtype);
    d.type = std::string(zarr::DTypeName(m.dtype));
    return std::optional<ArrayDesc>(std::move(d));
  }
  Status Read(const std::string& path, Number as, uint64_t first, uint64_t count,
              void* out) const override {
    ASSIGN_OR_RETURN(const Node* n, Get(path));
    if (n->type != Node::Type::kArray) return NotFoundError(describe_ + ":" + path + ": no array");
    const zarr::ZarrArray& a = *n->array;
    uint64_t row = 1;
    for (size_t i = 1; i < a.meta().shape.size(); ++i) row *= a.meta().shape[i];
    if (row == 0 || first % row != 0 || count % row != 0)
      return InternalError(describe_ + ":" + path + ": a read of part of a row");
    if (count == 0) return OkStatus();
    ASSIGN_OR_RETURN(zarr::DenseBlock b, a.ReadRows(first / row, (first + count) / row));
    if (b.rows * b.row_elems != count || zarr::IsString(b.dtype))
      return CorruptError(describe_ + ":" + path + ": not the numbers asked for");
    switch (as) {
      case Number::kInt8:
        Convert(b, count, static_cast<int8_t*>(out));
        break;
      case Number::kInt16:
        Convert(b, count, static_cast<int16_t*>(out));
        break;
      case Number::kInt32:
        Convert(b, count, static_cast<int32_t*>(out));
        break;
      case Number::kInt64:
        Convert(b, count, static_cast<int64_t*>(out));
        break;
      case Number::kUInt8:
      case Number::kBool:
        Convert(b, count, static_cast<uint8_t*>(out));
        break;
      case Number::kUInt16:
        Convert(b, count, static_cast<uint16_t*>(out));
        break;
      case Number::kUInt32:
        Convert(b, count, static_cast<uint32_t*>(out));
        break;
      case Number::kUInt64:
        Convert(b, count, static_cast<uint64_t*>(out));
        break;
      case Number::kFloat32:
        Convert(b, count, static_cast<float*>(out));
        break;
      case Number::kFloat64:
        Convert(b, count, static_cast<double*>(out));
        break;
    }
    return OkStatus();
  }
  Result<std::vector<std::string>> Strings(const std::string& path) const override {
    ASSIGN_OR_RETURN(const Node* n, Get(path));
    if (n->type != Node::Type::kArray || !zarr::IsString(n->array->meta().dtype))
      return CorruptError(describe_ + ":" + path + ": not an array of strings");
    ASSIGN_OR_RETURN(zarr::DenseBlock b, n->array->ReadAll());
    return std::move(b.strings);
  }

 private:
  static std::string Key(const std::string& path) {
    return path == "/" ? std::string() : path.substr(1);
  }
  static std::string Join(const std::string& group, const std::string& name) {
    return group == "/" ? "/" + name : group + "/" + name;
  }
  static void TakeAttributes(const nlohmann::json& attrs, Node* n) {
    if (!attrs.is_object()) return;
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      if (it->is_string()) {
        n->attributes[it.key()] = {it->get<std::string>()};
      } else if (it->is_array() &&
                 std::all_of(it->begin(), it->end(), [](const auto& v) { return v.is_string(); })) {
        std::vector<std::string> values;
        for (const auto& v : *it) values.push_back(v.get<std::string>());
        n->attributes[it.key()] = std::move(values);
      }
    }
  }

  Result<const Node*> Get(const std::string& path) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = nodes_.find(path);
    if (it != nodes_.end()) return it->second.get();
    auto n = std::make_unique<Node>();
    const std::string key = Key(path);
    const std::string prefix = key.empty() ? key : key + "/";
    ASSIGN_OR_RETURN(auto v3, store_->Get(prefix + "zarr.json"));
    if (v3) {
      auto j = nlohmann::json::parse(*v3, nullptr, false);
      if (j.is_discarded() || !j.is_object())
        return CorruptError(describe_ + ":" + path + "/zarr.json: not JSON");
      if (j.contains("attributes")) TakeAttributes(j["attributes"], n.get());
      if (j.value("node_type", "") == "group") {
        n->type = Node::Type::kGroup;
      } else if (j.value("node_type", "") == "array") {
        ASSIGN_OR_RETURN(zarr::ArrayMetadata meta, zarr::ParseV3Metadata(*v3));
        n->type = Node::Type::kArray;
        n->array = zarr::ZarrArray::FromMetadata(store_, key, std::move(meta));
      }
    } else {
      ASSIGN_OR_RETURN(auto zattrs, store_->Get(prefix + ".zattrs"));
      if (zattrs) {
        auto j = nlohmann::json::parse(*zattrs, nullptr, false);
        if (j.is_discarded()) return CorruptError(describe_ + ":" + path + "/.zattrs: not JSON");
        TakeAttributes(j, n.get());
      }
      ASSIGN_OR_RETURN(auto zgroup, store_->Get(prefix + ".zgroup"));
      if (zgroup) {
        n->type = Node::Type::kGroup;
      } else if (!key.empty()) {
        ASSIGN_OR_RETURN(auto zarray, store_->Get(prefix + ".zarray"));
        if (zarray) {
          auto meta = zarr::ParseV2Metadata(*zarray, zattrs ? *zattrs : "");
          if (!meta.ok()) return std::move(meta).status().WithContext(describe_ + ":" + path);
          n->type = Node::Type::kArray;
          n->array = zarr::ZarrArray::FromMetadata(store_, key, std::move(meta).value());
        }
      }
    }
    if (n->array) n->array->UseCache(pool_);
    return nodes_.emplace(path, std::move(n)).first->second.get();
  }

  std::shared_ptr<const io::BlobStore> store_;
  cache::CachePool* pool_;
  std::string describe_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::unique_ptr<Node>> nodes_;
};

}  // namespace

std::shared_ptr<const Elements> ZarrElements(std::shared_ptr<const io::BlobStore> store,
                                             cache::CachePool* pool) {
  return std::make_shared<const ZarrTree>(std::move(store), pool);
}

}  // namespace omicsfs::formats::anndata
