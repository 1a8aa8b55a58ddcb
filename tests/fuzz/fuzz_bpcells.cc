// BPCells matrix and fragments readers over arrays carved from the input (a memory store):
// open, then decode every entry / fragment.
#include <cstring>
#include <string>
#include <vector>

#include "formats/bpcells/fragments.h"
#include "formats/bpcells/matrix.h"
#include "io/memory_array_store.h"

namespace {

struct Reader {
  const uint8_t* p;
  size_t n;
  template <typename T>
  std::vector<T> Take(size_t max_items) {
    if (n < 1) return {};
    size_t items = std::min<size_t>(p[0] % (max_items + 1), (n - 1) / sizeof(T));
    std::vector<T> v(items);
    if (items) std::memcpy(v.data(), p + 1, items * sizeof(T));
    p += 1 + items * sizeof(T);
    n -= 1 + items * sizeof(T);
    return v;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace omicsfs;
  if (size < 1) return 0;
  Reader r{data + 1, size - 1};
  auto store = std::make_shared<io::MemoryArrayStore>("fuzz");
  const bool fragments = data[0] & 1, packed = data[0] & 2, v2 = data[0] & 4;
  if (fragments) {
    store->SetVersion(std::string(packed ? "packed" : "unpacked") + "-fragments-v" +
                      (v2 ? "2" : "1"));
    store->PutStrings("chr_names", {"a", "b"});
    store->PutStrings("cell_names", {"x", "y", "z"});
    if (v2)
      store->Put("chr_ptr", r.Take<uint64_t>(4));
    else
      store->Put("chr_ptr", r.Take<uint32_t>(4));
    for (const char* p : {"cell", "start", "end"}) {
      if (packed) {
        store->Put(std::string(p) + "_data", r.Take<uint32_t>(64));
        store->Put(std::string(p) + "_idx", r.Take<uint32_t>(8));
        if (std::string(p) == "start") store->Put("start_starts", r.Take<uint32_t>(8));
      } else {
        store->Put(p, r.Take<uint32_t>(64));
      }
    }
    auto f = formats::bpcells::Fragments::Open(store);
    if (f.ok()) {
      formats::bpcells::FragmentRange out;
      (void)(*f)->Read(0, (*f)->size(), &out);
    }
    return 0;
  }
  const char* types[] = {"uint", "float", "double"};
  const int t = (data[0] >> 3) % 3;
  store->SetVersion(std::string(packed ? "packed-" : "unpacked-") + types[t] + "-matrix-v" +
                    (v2 ? "2" : "1"));
  store->Put("shape", r.Take<uint32_t>(2));
  store->PutStrings("storage_order", {(data[0] & 32) ? "row" : "col"});
  if (v2)
    store->Put("idxptr", r.Take<uint64_t>(8));
  else
    store->Put("idxptr", r.Take<uint32_t>(8));
  if (packed) {
    store->Put("index_data", r.Take<uint32_t>(64));
    store->Put("index_idx", r.Take<uint32_t>(8));
    store->Put("index_starts", r.Take<uint32_t>(8));
    if (t == 0) {
      store->Put("val_data", r.Take<uint32_t>(64));
      store->Put("val_idx", r.Take<uint32_t>(8));
    }
  } else {
    store->Put("index", r.Take<uint32_t>(64));
  }
  if (!packed || t != 0) {
    if (t == 0) store->Put("val", r.Take<uint32_t>(64));
    if (t == 1) store->Put("val", r.Take<float>(64));
    if (t == 2) store->Put("val", r.Take<double>(64));
  }
  auto m = formats::bpcells::Matrix::Open(store);
  if (m.ok()) {
    formats::bpcells::MatrixEntries e;
    (void)(*m)->ReadEntries(0, (*m)->nnz(), &e);
  }
  return 0;
}
