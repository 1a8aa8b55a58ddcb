// Golden test of what a user's index_dir holds: the keys of the persisted size indexes (.idx),
// region and BGEN indexes (.rix) and transposed copies (.csr) that discovery gives every view of
// the shared corpus and of tests/data/examples, and the sizes of those views. An index_dir
// written by an earlier release must serve a new build as it is: no sizing pass, no new index
// file. So a change to a key (the store's fingerprint, "\nview NAME", "\nregion index NAME", the
// file naming, the schema) must be deliberate, and this test makes it visible.
//
// Phase 1: Discover over each SOURCE with a fresh index_dir; every file is sized and its first
// bytes read (which writes the region indexes, the .bgi data and the transposed copies); then
// every file of index_dir is parsed: its name must be the hash of the key inside (IndexStore's
// naming), and the key, machine-independent (the SOURCE paths as $CORPUS / $EXAMPLES; each
// source file's mtime, checked against stat, as $MTIME; a directory's size, which depends on the
// file system, as $DIRSIZE), goes to the golden file. Long store fingerprints (a VCF Zarr store
// lists all of its files) are written once each, the files of a large store summarised per
// top-level folder (count, bytes, a digest of its normalised lines).
// Phase 2: a new Discover over the same index_dir with a fresh cache: the same sizes, no sizing
// pass, and not one file of index_dir created or rewritten (inode numbers unchanged).
//
// The golden file: tests/data/golden/index_keys.txt. To rewrite it (only when a change of keys is
// intended, which makes every user's index_dir stale):
//   OMICSFS_UPDATE_GOLDEN=1 ./build/tests/golden_keys_test
// On a mismatch the lines that differ are printed and the whole output is written beside the
// test's temp files (the message names it), for `diff`.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "codec/hash.h"
#include "testutil/mount_fixture.h"
#include "text/index_store.h"
#include "util/fs.h"
#include "vfs/discover.h"

namespace omicsfs::vfs {
namespace {

const std::string kGolden = OMICSFS_TEST_DATA "/golden/index_keys.txt";

std::string Absolute(const std::string& p) {
  std::string s = fs::absolute(p).lexically_normal().string();  // as Discover spells SOURCE
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The SOURCEs, with the placeholder each one's path becomes, and the top-level folders of each
// that the golden file records (empty: all). The shared corpus grows (anndata/ came before its
// kind): a fixed list of its folders keeps an addition from failing a test of persisted keys.
// Add a folder here, and rewrite the golden file once, when its stores become a kind.
struct Source {
  std::string placeholder;
  std::string path;
  std::set<std::string> only;
};
std::vector<Source> Sources() {
  return {{"$CORPUS", Absolute(OMICSFS_CORPUS_DIR), {"anndata", "bpcells", "datg", "vcf-zarr"}},
          {"$EXAMPLES", Absolute(OMICSFS_TEST_DATA "/examples"), {}}};
}

// Whether the golden file records a (normalised) key: its paths under a SOURCE lie in the
// folders that SOURCE records.
bool Recorded(const std::string& key) {
  for (const Source& src : Sources()) {
    if (src.only.empty()) continue;
    const std::string prefix = src.placeholder + "/";
    for (size_t at = key.find(prefix); at != std::string::npos; at = key.find(prefix, at + 1)) {
      const size_t from = at + prefix.size();
      const size_t end = key.find_first_of("/ \n", from);
      if (src.only.count(
              key.substr(from, end == std::string::npos ? std::string::npos : end - from)) == 0)
        return false;
    }
  }
  return true;
}

std::string Hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

class Normalizer {
 public:
  Normalizer(std::vector<Source> sources, std::string index_dir)
      : sources_(std::move(sources)), index_dir_(std::move(index_dir)) {}

  // Every SOURCE path (and index_dir's, which no key should hold) as its placeholder.
  std::string Paths(std::string s) const {
    std::vector<std::pair<std::string, std::string>> subs;
    for (const auto& src : sources_) subs.emplace_back(src.path, src.placeholder);
    subs.emplace_back(index_dir_, "$INDEX_DIR");
    for (const auto& [from, to] : subs) {
      for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
        s.replace(at, from.size(), to);
    }
    return s;
  }

  // One line of a key: "PATH SIZE MTIME" of a source file, exactly as stat gives them now,
  // becomes "PATH' SIZE $MTIME" (a directory's size $DIRSIZE); any other line keeps its text
  // (with paths replaced), so a changed format shows as machine-specific text in the diff.
  std::string Line(const std::string& line) const {
    const size_t s2 = line.rfind(' ');
    const size_t s1 =
        s2 == std::string::npos || s2 == 0 ? std::string::npos : line.rfind(' ', s2 - 1);
    if (s1 != std::string::npos) {
      const std::string path = line.substr(0, s1);
      struct stat st;
      if (::stat(path.c_str(), &st) == 0 &&
          line.substr(s1 + 1) == std::to_string(st.st_size) + " " +
                                     std::to_string(st.st_mtim.tv_sec) + "." +
                                     std::to_string(st.st_mtim.tv_nsec)) {
        return Paths(path) + " " +
               (S_ISDIR(st.st_mode) ? std::string("$DIRSIZE") : std::to_string(st.st_size)) +
               " $MTIME";
      }
    }
    return Paths(line);
  }

  std::string Key(const std::string& key) const {
    std::string out;
    size_t start = 0;
    for (;;) {
      const size_t nl = key.find('\n', start);
      out += Line(key.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
      if (nl == std::string::npos) return out;
      out += '\n';
      start = nl + 1;
    }
  }

 private:
  std::vector<Source> sources_;
  std::string index_dir_;
};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// ---- The tree ----

struct Walker {
  const Tree& tree;
  const Normalizer& norm;
  std::vector<std::string>* lines;
  std::vector<std::string>* errors;
  const std::set<std::string>* only;  // the top-level entries walked; empty: all

  // A file listed a moment ago that a pass, sizing another file of its folder, found cannot
  // exist (a region index tabix refuses): no longer in the folder, and the second discovery,
  // told by index_dir, does not list it either.
  bool Withdrawn(Ino ino) const {
    auto content = tree.Open(ino, O_RDONLY);
    return content.ok() && (*content)->Withdrawn().has_value();
  }

  static std::string Mode(mode_t m) {
    char b[8];
    std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(m & 07777));
    return b;
  }

  void Walk(Ino ino, const std::string& path) {
    auto entries = tree.ReadDir(ino);
    if (!entries.ok()) {
      errors->push_back(path + ": " + entries.status().ToString());
      return;
    }
    for (const auto& e : *entries) {
      if (e.name == "." || e.name == "..") continue;
      if (path.empty() && !only->empty() && only->count(e.name) == 0) continue;
      const std::string p = path.empty() ? e.name : path + "/" + e.name;
      auto attr = tree.GetAttr(e.ino);               // sizes the file
      if (!attr.ok() && Withdrawn(e.ino)) continue;  // left the folder: see below
      if (!attr.ok()) {
        const std::string why = attr.status().ToString();  // its code (messages may say more later)
        lines->push_back("? " + p + " " + why.substr(0, why.find(':')));
        continue;
      }
      switch (e.kind) {
        case NodeKind::kDirectory:
          lines->push_back("d " + Mode(attr->mode) + " " + p + "/");
          Walk(e.ino, p);
          break;
        case NodeKind::kSymlink: {
          auto target = tree.ReadLink(e.ino);
          lines->push_back("l " + Mode(attr->mode) + " " + p + " -> " +
                           (target.ok() ? norm.Paths(*target) : target.status().ToString()));
          break;
        }
        case NodeKind::kFile: {
          lines->push_back("f " + Mode(attr->mode) + " " + std::to_string(attr->size) + " " + p);
          // The first bytes: builds what a read needs (region indexes, .bgi, transposed copies).
          auto head = tree.Read(e.ino, 0, 64);
          if (!head.ok()) errors->push_back(p + ": " + head.status().ToString());
          break;
        }
      }
    }
  }
};

struct Discovered {
  std::vector<std::string> tree;    // one line per node, per SOURCE
  std::vector<std::string> errors;  // reads that failed
  uint64_t chunks_sized = 0;  // chunks of sizing passes run (0: every size came from index_dir)
};

Discovered DiscoverAll(const std::string& index_dir, const Normalizer& norm) {
  Discovered out;
  for (const auto& src : Sources()) {
    cache::CachePool pool(256 << 20);
    text::IndexStore index(index_dir);
    text::SizingOptions::Progress progress;
    DiscoverOptions o;
    o.pool = &pool;
    o.index_dir = index_dir;
    o.sizing.index = &index;
    o.sizing.progress = &progress;
    o.h5vet.helper = OMICSFS_H5VET;
    auto tree = Discover(src.path, o);
    if (!tree.ok()) {
      ADD_FAILURE() << src.path << ": " << tree.status().ToString();
      continue;
    }
    out.tree.push_back("== tree " + src.placeholder);
    Walker w{**tree, norm, &out.tree, &out.errors, &src.only};
    w.Walk(kRootIno, "");
    out.chunks_sized += progress.chunks_total.load();
  }
  return out;
}

// ---- index_dir ----

struct IndexFile {
  std::string name;
  ino_t ino = 0;
  std::string kind;     // ".idx", ".rix", ".csr"
  std::string key;      // as stored
  std::string info;     // what else the header says (schema; a copy's shape)
  std::string problem;  // a file that is not a well-formed index named after its key
};

template <typename T>
bool Get(const std::string& d, size_t at, T* v) {
  if (d.size() < at + sizeof(T)) return false;
  std::memcpy(v, d.data() + at, sizeof(T));
  return true;
}

IndexFile ParseIndexFile(const std::string& dir, const std::string& name) {
  IndexFile f;
  f.name = name;
  const std::string path = dir + "/" + name;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) f.ino = st.st_ino;
  const size_t dot = name.find('.');
  f.kind = dot == std::string::npos ? "" : name.substr(dot);
  if (dot != 16 || name.find_first_not_of("0123456789abcdef") != 16 ||
      (f.kind != ".idx" && f.kind != ".rix" && f.kind != ".csr")) {
    f.problem = "not an index file name";
    return f;
  }
  std::string d;
  if (!testutil::ReadWhole(path, &d)) {
    f.problem = "unreadable";
    return f;
  }
  if (f.kind == ".csr") {  // row_access.cc: magic, rows, nnz, record size, key length, key, ...
    uint64_t fields[4];
    if (d.compare(0, 8, "OMXCSR01") != 0 || !Get(d, 8, &fields) || d.size() < 40 + fields[3]) {
      f.problem = "bad .csr header";
      return f;
    }
    f.key = d.substr(40, fields[3]);
    f.info = "rows=" + std::to_string(fields[0]) + " nnz=" + std::to_string(fields[1]) +
             " record=" + std::to_string(fields[2]);
    // Named in discover.cc after codec::Hash64 of the key.
    if (name != Hex(codec::Hash64(f.key.data(), f.key.size())) + ".csr")
      f.problem = "name is not Hash64(key)";
    return f;
  }
  // index_store.cc: magic, schema (u32), key length, key, count, payload, checksum.
  uint32_t schema;
  uint64_t key_len;
  // OMXIDX01: an FNV-1a checksum; OMXIDX02 (written now): XXH3. Keys and names are the same.
  if ((d.compare(0, 8, "OMXIDX01") != 0 && d.compare(0, 8, "OMXIDX02") != 0) ||
      !Get(d, 8, &schema) || !Get(d, 12, &key_len) || d.size() < 20 + key_len) {
    f.problem = "bad header";
    return f;
  }
  f.key = d.substr(20, key_len);
  f.info = "schema=" + std::to_string(schema);
  if (name != Hex(text::Fnv1a(f.key)) + f.kind) f.problem = "name is not Fnv1a(key)";
  return f;
}

std::vector<IndexFile> ListIndexDir(const std::string& dir) {
  std::vector<IndexFile> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(ParseIndexFile(dir, name));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const IndexFile& a, const IndexFile& b) { return a.name < b.name; });
  return out;
}

// A store fingerprint's lines (after its first) for the golden file, a path under the store's own
// path ("store PATH") as "./REST" and the store's path as "."; when long, the lines of files under
// it are summarised by their first component below it ("./NAME/* ": the lines of NAME and of what
// is below it: their count, the files' bytes, the low 32 bits of an FNV-1a digest of the lines).
std::vector<std::string> DescribeFingerprint(const std::string& label, const std::string& fp) {
  std::vector<std::string> lines = SplitLines(fp);
  std::vector<std::string> out;
  const std::string root = label.rfind("store ", 0) == 0 ? label.substr(6) : std::string("\x01");
  auto relative = [&](const std::string& l) {
    if (l.rfind(root + " ", 0) == 0) return "." + l.substr(root.size());
    if (l.rfind(root + "/", 0) == 0) return "." + l.substr(root.size());
    return l;
  };
  constexpr size_t kVerbatim = 24;
  if (lines.size() <= kVerbatim + 1) {
    for (size_t i = 1; i < lines.size(); ++i) out.push_back("  " + Escape(relative(lines[i])));
    return out;
  }
  struct Group {
    size_t lines = 0;
    uint64_t bytes = 0;
    uint64_t digest = 0xcbf29ce484222325ull;
    std::string only;  // its line, when it has one
  };
  std::map<std::string, Group> groups;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const bool file_line = l.size() > 7 && l.compare(l.size() - 7, 7, " $MTIME") == 0;
    if (!file_line || l.rfind(root + "/", 0) != 0) {
      out.push_back("  " + Escape(relative(l)));
      continue;
    }
    const std::string rest = l.substr(root.size() + 1);
    const size_t end = std::min(rest.find('/'), rest.find(' '));
    Group& g = groups[rest.substr(0, end)];
    ++g.lines;
    const std::string size = l.substr(0, l.size() - 7).substr(l.rfind(' ', l.size() - 8) + 1);
    if (size != "$DIRSIZE") g.bytes += std::stoull(size);
    g.digest = text::Fnv1a(l + "\n", g.digest);
    g.only = l;
  }
  for (const auto& [name, g] : groups) {
    if (g.lines == 1) {
      out.push_back("  " + Escape(relative(g.only)));
    } else {
      out.push_back("  ./" + name + "/* " + std::to_string(g.lines) + " lines " +
                    std::to_string(g.bytes) + " bytes digest " + Hex(g.digest).substr(8));
    }
  }
  return out;
}

// The index files' section: each store fingerprint once ("@ " its first line, then the others),
// followed by the files keyed by it ("key" and the file's kind, its header, the key's rest after
// the fingerprint). The files' names are hashes of machine-specific keys: checked, not recorded.
std::vector<std::string> DescribeIndexDir(const std::vector<IndexFile>& files,
                                          const Normalizer& norm) {
  std::map<std::string, std::vector<std::string>> keys_of;  // normalised fingerprint -> its files
  std::map<std::string, size_t> kinds;
  std::vector<std::string> problems;
  for (const auto& f : files) {
    if (f.problem.empty() && !Recorded(norm.Key(f.key))) continue;
    ++kinds[f.kind];
    if (!f.problem.empty()) {
      problems.push_back("! " + f.kind + " " + f.problem + ": " + Escape(norm.Key(f.key)));
      continue;
    }
    const std::string key = norm.Key(f.key);
    if (!Recorded(key)) continue;
    // The store's fingerprint is the key up to its first empty line (all of it for a .csr).
    const size_t blank = key.find("\n\n");
    const std::string fp = blank == std::string::npos ? key : key.substr(0, blank + 1);
    const std::string tail = blank == std::string::npos ? "" : key.substr(blank + 1);
    keys_of[fp].push_back("  key " + f.kind + " " + f.info + " " + Escape(tail));
  }
  std::vector<std::string> out;
  std::string summary = "== index files:";
  for (const auto& [kind, n] : kinds) summary += " " + std::to_string(n) + " " + kind;
  out.push_back(summary);
  out.insert(out.end(), problems.begin(), problems.end());
  // By first line; fingerprints sharing one are told apart by the rest of their lines.
  std::map<std::string, std::vector<const std::string*>> by_label;
  for (const auto& [fp, keys] : keys_of) by_label[fp.substr(0, fp.find('\n'))].push_back(&fp);
  for (const auto& [label, fps] : by_label) {
    for (const std::string* fp : fps) {
      out.push_back("@ " + Escape(label));
      for (auto& l : DescribeFingerprint(label, *fp)) out.push_back(l);
      std::vector<std::string> keys = keys_of[*fp];
      std::sort(keys.begin(), keys.end());
      out.insert(out.end(), keys.begin(), keys.end());
    }
  }
  return out;
}

// What IndexStore names a key's files, from files it writes: pins the naming (Fnv1a, 16 hex
// digits, the extensions) and codec::Hash64, which names the transposed copies.
std::vector<std::string> Naming(const std::string& scratch) {
  const std::string key = "store /a\n/a/b 1 2.3\n\nview matrix.mtx";
  text::IndexStore s(scratch);
  s.Save(key, {1, 2, 3});
  s.SaveBlob(key, "blob");
  std::vector<std::string> out{"== naming of \"" + Escape(key) + "\""};
  for (const auto& f : ListIndexDir(scratch)) out.push_back(f.name + " " + f.info);
  out.push_back("Hash64 " + Hex(codec::Hash64(key.data(), key.size())));
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The lines only in one of the two texts, per section (a "== " or "@ " line and the lines up to
// the next one), each section that differs under its header: readable whatever the lines are
// (sorted keys, summaries), and never more than `limit` lines.
std::string LineDiff(const std::vector<std::string>& expected,
                     const std::vector<std::string>& actual, size_t limit = 200) {
  using Sections = std::vector<std::pair<std::string, std::vector<std::string>>>;
  auto split = [](const std::vector<std::string>& lines) {
    Sections out{{"(top)", {}}};
    for (const auto& l : lines) {
      if (l.rfind("== ", 0) == 0 || l.rfind("@ ", 0) == 0) {
        out.push_back({l, {}});
      } else {
        out.back().second.push_back(l);
      }
    }
    return out;
  };
  const Sections e = split(expected), a = split(actual);
  std::map<std::string, std::multiset<std::string>> e_lines, a_lines;
  for (const auto& [h, ls] : e) e_lines[h].insert(ls.begin(), ls.end());
  for (const auto& [h, ls] : a) a_lines[h].insert(ls.begin(), ls.end());
  std::string out;
  size_t n = 0;
  auto emit = [&](const std::string& line) {
    if (n++ < limit) out += line + "\n";
  };
  std::set<std::string> done;
  auto section = [&](const std::string& header, const std::vector<std::string>& lines) {
    if (!done.insert(header).second) return;
    const bool in_e = e_lines.count(header), in_a = a_lines.count(header);
    if (!in_a || !in_e) {  // a whole section gone or new
      emit(std::string(in_e ? "-" : "+") + header);
      for (const auto& l : lines) emit(std::string(in_e ? "-" : "+") + l);
      return;
    }
    std::multiset<std::string> only_a = a_lines[header], only_e = e_lines[header];
    for (const auto& l : e_lines[header]) {
      if (auto it = only_a.find(l); it != only_a.end()) {
        only_a.erase(it);
        only_e.erase(only_e.find(l));
      }
    }
    if (only_e.empty() && only_a.empty()) return;
    emit(" " + header);
    for (const auto& l : only_e) emit("-" + l);
    for (const auto& l : only_a) emit("+" + l);
  };
  for (const auto& [h, ls] : e) section(h, ls);
  for (const auto& [h, ls] : a) section(h, ls);
  if (n > limit) out += "... and " + std::to_string(n - limit) + " more lines\n";
  return out;
}

class GoldenIndexKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(OMICSFS_CORPUS_DIR, R_OK) != 0)
      GTEST_SKIP() << "no corpus at " << OMICSFS_CORPUS_DIR;
    work_ = testutil::MakeTempDir("omicsfs-golden-");
    ASSERT_FALSE(work_.empty());
    index_dir_ = work_ + "/index";
  }
  void TearDown() override {
    if (!work_.empty()) fs::remove_all(work_);
  }
  std::string work_, index_dir_;
};

TEST_F(GoldenIndexKeys, PersistedKeysAndSizesAreUnchangedAndReused) {
  const Normalizer norm(Sources(), index_dir_);

  // Phase 1: a fresh index_dir filled by sizing and reading every view.
  const Discovered first = DiscoverAll(index_dir_, norm);
  EXPECT_TRUE(first.errors.empty()) << Join(first.errors);
  EXPECT_GT(first.chunks_sized, 0u);
  const std::vector<IndexFile> written = ListIndexDir(index_dir_);
  for (const auto& f : written)
    EXPECT_TRUE(f.problem.empty()) << f.name << ": " << f.problem << "\n" << f.key;

  std::vector<std::string> actual = {
      "# omicsfs golden: keys of index_dir's files and view sizes (tests/vfs/golden_keys_test.cc);",
      "# rewrite with OMICSFS_UPDATE_GOLDEN=1 only for an intended change of keys (it makes every",
      "# index_dir stale). Trees: kind mode [size] path below SOURCE (? a file whose size fails).",
      "# Index files: per store fingerprint (@ its first line, then its lines, ./ = below the "
      "store's",
      "# path), its files: \"key\" kind header, the key's rest after the fingerprint (\\n: "
      "newline)."};
  for (auto& l : Naming(work_ + "/naming")) actual.push_back(l);
  actual.insert(actual.end(), first.tree.begin(), first.tree.end());
  for (auto& l : DescribeIndexDir(written, norm)) actual.push_back(l);

  if (const char* update = std::getenv("OMICSFS_UPDATE_GOLDEN");
      update != nullptr && std::string(update) == "1") {
    fs::create_directories(fs::path(kGolden).parent_path());
    std::ofstream(kGolden, std::ios::binary | std::ios::trunc) << Join(actual);
    std::printf("rewrote %s (%zu lines)\n", kGolden.c_str(), actual.size());
  } else {
    std::string golden;
    ASSERT_TRUE(testutil::ReadWhole(kGolden, &golden))
        << "missing " << kGolden << " (OMICSFS_UPDATE_GOLDEN=1 writes it)";
    const std::vector<std::string> expected = SplitLines(golden);
    if (expected != actual) {
      const std::string out = ::testing::TempDir() + "index_keys.actual.txt";
      std::ofstream(out, std::ios::binary | std::ios::trunc) << Join(actual);
      ADD_FAILURE() << "index keys or view sizes differ from " << kGolden << " (- golden, + now):\n"
                    << LineDiff(expected, actual) << "whole output: " << out
                    << "\nA persisted key that changes makes every user's index_dir stale.";
    }
  }

  // Phase 2: the same index_dir serves a new discovery with a fresh cache as it is.
  const Discovered second = DiscoverAll(index_dir_, norm);
  EXPECT_TRUE(second.errors.empty()) << Join(second.errors);
  EXPECT_EQ(second.chunks_sized, 0u) << "a sizing pass ran although index_dir holds every size";
  EXPECT_TRUE(second.tree == first.tree)
      << "the second discovery shows other sizes (- first, + second):\n"
      << LineDiff(first.tree, second.tree);
  const std::vector<IndexFile> after = ListIndexDir(index_dir_);
  std::vector<std::string> before_names, after_names;
  for (const auto& f : written) before_names.push_back(f.name + " inode " + std::to_string(f.ino));
  for (const auto& f : after) after_names.push_back(f.name + " inode " + std::to_string(f.ino));
  EXPECT_TRUE(after_names == before_names)
      << "index files created or rewritten by the second discovery (- before, + after):\n"
      << LineDiff(before_names, after_names);
}

}  // namespace
}  // namespace omicsfs::vfs
