#include "io/http/http_byte_space.h"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace omicsfs::io::http {

namespace {

// Consolidated metadata of a large Zarr store is a few MB (a VCF Zarr store with 60 arrays:
// ~60 KB); 64 MiB bounds a hostile or mistaken server.
constexpr uint64_t kMaxMetadataBytes = uint64_t{64} << 20;
// HEADs in flight while checking fixed names or listing a folder: a BPCells store has up to 30
// arrays; 8 at once make that 4 round trips.
constexpr size_t kParallelHeads = 8;

ObjectInfo InfoOf(const RemoteObject& o) {
  ObjectInfo info;
  info.size = o.size;
  info.mtime = o.mtime;
  info.perm = 0444;
  info.stamp = o.Stamp();
  return info;
}

// HEADs `url`/name for each of `names`, kParallelHeads at a time; nullopt for those absent.
Result<std::vector<std::optional<RemoteObject>>> HeadAll(const HttpClient& client,
                                                         const std::string& url,
                                                         const std::vector<std::string>& names) {
  std::vector<std::optional<RemoteObject>> found(names.size());
  std::vector<Status> errors(names.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < names.size();) {
      auto r = client.Head(url + "/" + EncodeKeyForUrl(names[i]));
      if (!r.ok()) {
        errors[i] = r.status();
      } else {
        found[i] = std::move(*r);
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(kParallelHeads, names.size()); ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (const Status& e : errors) RETURN_IF_ERROR(e);
  return found;
}

}  // namespace

HttpByteSource::HttpByteSource(std::shared_ptr<const HttpClient> client, std::string url,
                               RemoteObject object)
    : client_(std::move(client)),
      url_(std::move(url)),
      object_(std::move(object)),
      info_(InfoOf(object_)) {}

Status HttpByteSource::ReadExact(uint64_t offset, void* out, size_t length) const {
  if (offset > object_.size || length > object_.size - offset) {
    return CorruptError(url_ + ": bytes [" + std::to_string(offset) + ", " +
                        std::to_string(offset + length) + ") are past its end (" +
                        std::to_string(object_.size) + " bytes)");
  }
  return client_->ReadRange(url_, object_, offset, out, length);
}

Result<std::shared_ptr<const ByteSource>> OpenHttpObject(std::shared_ptr<const HttpClient> client,
                                                         const std::string& url,
                                                         std::shared_ptr<BlockCache> cache) {
  ASSIGN_OR_RETURN(std::optional<RemoteObject> object, client->Head(url));
  if (!object) return std::shared_ptr<const ByteSource>();
  auto source = std::make_shared<const HttpByteSource>(std::move(client), url, std::move(*object));
  if (cache == nullptr) return std::shared_ptr<const ByteSource>(std::move(source));
  return BlockCache::Wrap(cache, std::move(source));
}

Result<std::shared_ptr<HttpByteSpace>> HttpByteSpace::Create(
    std::string url, std::shared_ptr<const HttpClient> client, const std::vector<std::string>& keys,
    std::shared_ptr<BlockCache> cache) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return InvalidArgumentError("'" + url + "' is not an http:// or https:// URL");
  }
  while (url.size() > 8 && url.back() == '/') url.pop_back();
  std::shared_ptr<HttpByteSpace> space(
      new HttpByteSpace(std::move(url), std::move(client), std::move(cache)));
  // Every directory a key passes through, with its entries; std::set keeps them sorted once.
  std::map<std::string, std::map<std::string, EntryKind>> tree;
  tree[""];
  for (const std::string& key : keys) {
    RETURN_IF_ERROR(CheckKey(*space, key));
    size_t start = 0;
    for (;;) {
      const size_t slash = key.find('/', start);
      const std::string dir = start == 0 ? std::string() : key.substr(0, start - 1);
      if (slash == std::string::npos) {
        tree[dir].emplace(key.substr(start), EntryKind::kFile);
        break;
      }
      tree[dir][key.substr(start, slash - start)] = EntryKind::kDirectory;
      start = slash + 1;
    }
  }
  for (const auto& [dir, entries] : tree) {
    std::vector<ListEntry>& out = space->dirs_[dir];
    for (const auto& [name, kind] : entries) {
      ListEntry e;
      e.name = name;
      e.kind = kind;
      e.info.perm = kind == EntryKind::kDirectory ? 0555 : 0444;
      out.push_back(std::move(e));
    }
  }
  return space;
}

// A key the listing knows as a folder is not an object: no request needed to say so.
Result<std::shared_ptr<const ByteSource>> HttpByteSpace::Open(const std::string& key) const {
  RETURN_IF_ERROR(CheckKey(*this, key));
  if (dirs_.count(key) != 0) return std::shared_ptr<const ByteSource>();
  return OpenHttpObject(client_, UrlOf(key), cache_);
}

Result<std::optional<std::string>> HttpByteSpace::Get(const std::string& key,
                                                      uint64_t max_bytes) const {
  RETURN_IF_ERROR(CheckKey(*this, key));
  if (dirs_.count(key) != 0) return std::optional<std::string>();
  return client_->Get(UrlOf(key), max_bytes);
}

Result<std::vector<ListEntry>> HttpByteSpace::List(const std::string& prefix) const {
  if (!prefix.empty()) RETURN_IF_ERROR(CheckKey(*this, prefix));
  auto it = dirs_.find(prefix);
  if (it == dirs_.end()) return std::vector<ListEntry>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto done = listed_.find(prefix); done != listed_.end()) return done->second;
  }
  ASSIGN_OR_RETURN(std::vector<ListEntry> entries, HeadFiles(prefix, it->second));
  std::lock_guard<std::mutex> lock(mu_);
  return listed_.try_emplace(prefix, std::move(entries)).first->second;
}

Result<std::vector<ListEntry>> HttpByteSpace::HeadFiles(
    const std::string& prefix, const std::vector<ListEntry>& entries) const {
  std::vector<std::string> keys;
  for (const ListEntry& e : entries) {
    if (e.kind == EntryKind::kFile) keys.push_back(prefix.empty() ? e.name : prefix + "/" + e.name);
  }
  ASSIGN_OR_RETURN(auto found, HeadAll(*client_, url_, keys));
  std::vector<ListEntry> out;
  size_t f = 0;
  for (const ListEntry& e : entries) {
    if (e.kind == EntryKind::kDirectory) {
      out.push_back(e);
      continue;
    }
    const std::optional<RemoteObject>& object = found[f++];
    if (!object) continue;  // listed in the metadata, absent on the server
    ListEntry file = e;
    file.info = InfoOf(*object);
    out.push_back(std::move(file));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Key discovery.

namespace {

Result<nlohmann::json> ParseJson(const std::string& url, const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return CorruptError(url + ": not a JSON object");
  return j;
}

Result<std::vector<std::string>> KeysFromZmetadata(const std::string& url,
                                                   const std::string& text) {
  ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(url, text));
  auto meta = j.find("metadata");
  if (meta == j.end() || !meta->is_object()) {
    return CorruptError(url + ": consolidated metadata without a \"metadata\" object");
  }
  std::vector<std::string> keys = {".zmetadata"};
  for (auto it = meta->begin(); it != meta->end(); ++it) keys.push_back(it.key());
  return keys;
}

// Zarr v3: inline consolidated metadata maps node paths ("call_DP", "a/b") to their zarr.json.
std::vector<std::string> KeysFromZarrJson(const nlohmann::json& root) {
  std::vector<std::string> keys = {"zarr.json"};
  auto cm = root.find("consolidated_metadata");
  if (cm == root.end() || !cm->is_object()) return keys;
  auto meta = cm->find("metadata");
  if (meta == cm->end() || !meta->is_object()) return keys;
  for (auto it = meta->begin(); it != meta->end(); ++it) keys.push_back(it.key() + "/zarr.json");
  return keys;
}

// Keys come from the server: each must be one ValidKey accepts.
Result<std::vector<std::string>> Checked(const std::string& url, std::vector<std::string> keys) {
  for (const std::string& k : keys) {
    if (!ValidKey(k)) return CorruptError(url + ": lists a bad key '" + k + "'");
  }
  return keys;
}

// Those of `names` that exist under `url`.
Result<std::vector<std::string>> PresentNames(const HttpClient& client, const std::string& url,
                                              const std::vector<std::string>& names) {
  ASSIGN_OR_RETURN(auto found, HeadAll(client, url, names));
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (found[i]) out.push_back(names[i]);
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> DiscoverHttpKeys(const HttpClient& client, const std::string& url,
                                                  const std::vector<std::string>& fixed_names) {
  std::string root = url;
  while (root.size() > 8 && root.back() == '/') root.pop_back();
  const std::string zmeta_url = root + "/.zmetadata";
  ASSIGN_OR_RETURN(auto zmeta, client.Get(zmeta_url, kMaxMetadataBytes));
  if (zmeta) {
    ASSIGN_OR_RETURN(auto keys, KeysFromZmetadata(zmeta_url, *zmeta));
    return Checked(zmeta_url, std::move(keys));
  }

  const std::string zarr_json_url = root + "/zarr.json";
  ASSIGN_OR_RETURN(auto zarr_json, client.Get(zarr_json_url, kMaxMetadataBytes));
  if (zarr_json) {
    ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(zarr_json_url, *zarr_json));
    return Checked(zarr_json_url, KeysFromZarrJson(j));
  }
  ASSIGN_OR_RETURN(auto zgroup, client.Head(root + "/.zgroup"));
  if (zgroup) {
    return UnsupportedError(root +
                            ": a Zarr v2 store without consolidated metadata (.zmetadata) "
                            "cannot be listed over HTTP; consolidate it (zarr.consolidate_metadata)"
                            " or serve it from S3 or a local directory");
  }
  if (!fixed_names.empty()) {
    ASSIGN_OR_RETURN(auto version, client.Head(root + "/version"));
    if (version) {
      std::vector<std::string> names = {"version"};
      for (const std::string& n : fixed_names) {
        if (n != "version") names.push_back(n);
      }
      return PresentNames(client, root, names);
    }
  }
  return UnsupportedError(root + ": no store found over HTTP (tried .zmetadata, zarr.json" +
                          std::string(fixed_names.empty() ? "" : ", version") +
                          "); plain HTTP has no listing");
}

}  // namespace omicsfs::io::http
