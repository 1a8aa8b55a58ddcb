#include "vfs/discover.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <set>
#include <cstdio>
#include <cstring>

#include "codec/hash.h"
#include "formats/bpcells/fragments.h"
#include "formats/bpcells/matrix.h"
#include "formats/bpcells/version.h"
#include "formats/datg/reader.h"
#include "formats/vcz/store.h"
#include "io/local/local_space.h"
#include "io/space_array_store.h"
#include "io/space_blob_store.h"
#include "io/zip/zip_space.h"
#include "io/h5_array_store.h"
#include "text/bed_source.h"
#include "text/bgzf_view.h"
#include "text/dense_source.h"
#include "text/index_store.h"
#include "text/mtx_source.h"
#include "text/plink_source.h"
#include "text/tabix_source.h"
#include "text/tsv_source.h"
#include "text/vcf_source.h"
#include "util/fs.h"
#include "util/log.h"
#include "vfs/files.h"

namespace omicsfs::vfs {
namespace {

namespace bp = formats::bpcells;

struct Meta {
  mode_t perm = 0444;
  struct timespec mtime {};
  uid_t uid = 0;
  gid_t gid = 0;
};

Meta MetaOf(const struct stat& st) {
  Meta m;
  m.perm = st.st_mode & 0555;
  m.mtime = st.st_mtim;
  m.uid = st.st_uid;
  m.gid = st.st_gid;
  return m;
}

// When discovery started: the mtime of remote folders, which have none (S3 prefixes). Fixed for
// the process, so a rescan sees them unchanged.
struct timespec StartTime() {
  static const struct timespec start = [] {
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec = 0;
    return t;
  }();
  return start;
}

class Builder {
 public:
  // `lazy`: the options lazy folders of a ByteSpace SOURCE are built with later (no `previous`);
  // null: every folder is built now.
  Builder(Tree* tree, const DiscoverOptions& options, std::shared_ptr<const DiscoverOptions> lazy = nullptr)
      : tree_(tree), options_(options), lazy_(std::move(lazy)) {
    // index_dir inside SOURCE holds omicsfs's own files (size indexes, transposed copies): it is
    // not mirrored, like a store's internal files. Recognised by device and inode, whatever the
    // path's spelling; only entries with its name are checked.
    struct stat st;
    if (!options_.index_dir.empty() && ::stat(options_.index_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      index_dev_ = st.st_dev;
      index_ino_ = st.st_ino;
      index_name_ = fs::path(options_.index_dir).lexically_normal().filename().string();
      if (index_name_.empty() || index_name_ == ".") index_name_ = fs::path(options_.index_dir).lexically_normal().parent_path().filename().string();
    }
  }

  // A directory of SOURCE keeps its read and search bits as they are (under default_permissions
  // the kernel enforces them: who cannot enter it on disk cannot enter it here). A directory made
  // from a file (HDF5 groups, NAME.datg/) can be entered by whoever can read the file.
  static mode_t DirPerm(const Meta& meta, bool from_file) {
    return from_file ? (meta.perm & 0444) | ((meta.perm & 0444) >> 2) : meta.perm & 0555;
  }

  Ino AddDir(Ino parent, const std::string& name, const Meta& meta, bool from_file = false) {
    Node n;
    n.name = name;
    n.kind = NodeKind::kDirectory;
    n.perm = DirPerm(meta, from_file);
    n.mtime = meta.mtime;
    n.uid = meta.uid;
    n.gid = meta.gid;
    return tree_->AddChild(parent, std::move(n));
  }

  Ino AddFile(Ino parent, const std::string& name, const Meta& meta,
              std::shared_ptr<const FileContent> content) {
    Node n;
    n.name = name;
    n.kind = NodeKind::kFile;
    n.perm = meta.perm & 0444;
    n.mtime = meta.mtime;
    n.uid = meta.uid;
    n.gid = meta.gid;
    n.content = std::move(content);
    return tree_->AddChild(parent, std::move(n));
  }

  // A text view; `key` names it in the persisted size index (the store's fingerprint + key).
  std::shared_ptr<const text::VirtualTextFile> MakeText(
      const std::string& key, std::shared_ptr<const text::RecordSource> source) {
    text::SizingOptions sizing = options_.sizing;
    if (!fingerprint_.empty()) sizing.index_key = fingerprint_ + "\nview " + key;
    return std::make_shared<const text::VirtualTextFile>(std::move(source), options_.pool, sizing);
  }

  void AddText(Ino parent, const std::string& name, const Meta& meta,
               std::shared_ptr<const text::RecordSource> source) {
    AddFile(parent, name, meta,
            std::make_shared<const ByteViewContent>(MakeText(name, std::move(source))));
  }

  // NAME.gz in `dir`: `bgzip -l 0` of `plain` (stored blocks, no index); `describe` names it in
  // errors.
  void AddStoredGz(Ino dir, const std::string& name, const Meta& meta, const std::string& describe,
                   std::shared_ptr<const text::ByteView> plain) {
    AddFile(dir, name, meta, std::make_shared<const ByteViewContent>(
        std::make_shared<const text::BgzfStoredView>(std::move(plain), describe)));
  }

  // A coordinate view NAME with its BGZF twin NAME.gz (stored blocks: `bgzip -l 0` of NAME) and
  // the twin's region index NAME.gz.tbi, or NAME.gz.csi when positions may pass 2^29. All three
  // share the store's mtime, so the index is never older than its data file.
  void AddIndexedText(Ino dir, const std::string& name, const Meta& meta, const std::string& where,
                      std::shared_ptr<const text::RecordSource> source, text::TabixPreset preset,
                      bool csi) {
    auto plain = MakeText(name, std::move(source));
    AddFile(dir, name, meta, std::make_shared<const ByteViewContent>(plain));
    const std::string gz = name + ".gz";
    AddStoredGz(dir, gz, meta, gz + " of " + where, plain);
    const std::string index = gz + (csi ? ".csi" : ".tbi");
    text::TabixIndexSource::Options o;
    o.preset = preset;
    o.csi = csi;
    o.store = options_.sizing.index;
    if (!fingerprint_.empty()) o.key = fingerprint_ + "\nregion index " + index;
    o.threads = options_.sizing.threads;
    auto raw = std::make_shared<const text::VirtualTextFile>(
        std::make_shared<const text::TabixIndexSource>(plain, o, index + " of " + where), options_.pool);
    AddFile(dir, index, meta, std::make_shared<const ByteViewContent>(
        std::make_shared<const text::BgzfDeflatedView>(raw, options_.pool, index + " of " + where)));
  }

  void AddError(Ino dir, const Meta& meta, const Status& status) {
    LogError(status.message());
    AddText(dir, "ERROR.txt", meta,
            std::make_shared<const text::StaticTextSource>(status.ToString() + "\n", "ERROR.txt"));
  }

  // fragments.bed, fragments.tsv, chromosomes.txt, cells.txt.
  void AddFragmentViews(Ino dir, const Meta& meta, std::shared_ptr<const io::ArrayStore> store) {
    auto fragments = bp::Fragments::Open(std::move(store));
    if (!fragments.ok()) return AddError(dir, meta, fragments.status());
    const auto& f = *fragments;
    const std::string where = f->Describe();
    using text::BedSource;
    using Layout = text::NamesSource::Layout;
    // CSI when an end passes 2^29 (end_max: n/128 values, read once here); without end_max,
    // .tbi, whose build then fails with EIO on such a position.
    auto max_end = f->MaxEnd();
    const bool csi = max_end.ok() && max_end->has_value() && **max_end >= uint64_t{text::kTbiMaxPosition};
    AddIndexedText(dir, "fragments.bed", meta, where, std::make_shared<const BedSource>(f, BedSource::Style::kBed),
                   text::TabixPreset::kBed, csi);
    AddIndexedText(dir, "fragments.tsv", meta, where, std::make_shared<const BedSource>(f, BedSource::Style::kTenX),
                   text::TabixPreset::kBed, csi);
    AddText(dir, "chromosomes.txt", meta, std::make_shared<const text::NamesSource>(
        std::shared_ptr<const std::vector<std::string>>(f, &f->chr_names()), Layout::kOnePerLine, 0, "chromosomes.txt of " + where));
    AddText(dir, "cells.txt", meta, std::make_shared<const text::NamesSource>(
        std::shared_ptr<const std::vector<std::string>>(f, &f->cell_names()), Layout::kOnePerLine, 0, "cells.txt of " + where));
  }

  // A store's identity. `index` keys persisted indexes (its path plus path, size and mtime of its
  // files: a copy restored from backup keeps its index); `change` adds ctimes and modes and is
  // what a rescan compares; `guard` lets readers refuse files changed after this moment.
  struct Stamp {
    std::string index;
    std::string change;
    ChangeGuard guard;
    struct timespec newest_mtime {};
    // The read bits every file of the store has: a view shows only what all of its sources allow.
    mode_t readable = 0444;
  };
  static Stamp StampOf(const std::string& store, const std::vector<std::string>& files) {
    Stamp s;
    s.index = "store " + store + "\n";
    s.change = s.index;
    for (const auto& f : files) {
      struct stat st;
      if (::stat(f.c_str(), &st) != 0) continue;
      const std::string line = f + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                               std::to_string(st.st_mtim.tv_nsec);
      s.index += line + "\n";
      s.change += line + " " + std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec) + " " +
                  std::to_string(st.st_mode) + "\n";
      s.guard.Observe(st);
      // A store reached through a symbolic link (follow_symlinks): a missing key is checked
      // against the store root's own lstat, so the link's times are part of the fingerprint too
      // (a link made after the store's files is not a change).
      struct stat link;
      if (::lstat(f.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) s.guard.Observe(link);
      s.readable &= st.st_mode;
      if (Later(st.st_mtim, s.newest_mtime)) s.newest_mtime = st.st_mtim;
    }
    s.guard.active = true;
    return s;
  }

  // On a rescan: copies the node at `parent`/`name` from the served tree when its fingerprint is
  // unchanged. Returns true when copied.
  bool Reuse(Ino parent, const std::string& name, const Stamp& stamp) {
    if (options_.previous == nullptr) return false;
    std::string vpath = tree_->PathOf(parent);
    if (!name.empty()) vpath = vpath.empty() ? name : vpath + "/" + name;
    return options_.previous->CopyInto(vpath, stamp.change, *tree_, parent);
  }
  // The files of a store directory (its fingerprint), without the index directory inside it:
  // writing an index must not make the store look changed.
  std::vector<std::string> FilesBelow(const std::string& dir) const {
    std::vector<std::string> out{dir};
    fs_error ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (IsIndexDir(it->path().filename().string(), it->path().string())) {
        it.disable_recursion_pending();
        continue;
      }
      out.push_back(it->path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Fills `dir` with the views of one BPCells store.
  void AddStoreViews(Ino dir, const Meta& meta, Result<std::shared_ptr<const io::ArrayStore>> store) {
    if (!store.ok()) return AddError(dir, meta, store.status());
    auto version = (*store)->Version();
    if (!version.ok()) return AddError(dir, meta, version.status());
    auto v = bp::ParseVersion(*version);
    if (!v) {
      return AddError(dir, meta, UnsupportedError((*store)->Describe() + ": unrecognised BPCells version '" + *version + "'"));
    }
    if (v->kind == bp::StoreKind::kFragments) return AddFragmentViews(dir, meta, *store);
    auto matrix = bp::Matrix::Open(*store);
    if (!matrix.ok()) return AddError(dir, meta, matrix.status());
    const auto& m = *matrix;
    const std::string where = m->Describe();
    auto rows = std::shared_ptr<const std::vector<std::string>>(m, &m->row_names());
    auto cols = std::shared_ptr<const std::vector<std::string>>(m, &m->col_names());
    using Layout = text::NamesSource::Layout;
    auto mtx = MakeText("matrix.mtx", std::make_shared<const text::MtxSource>(m));
    AddFile(dir, "matrix.mtx", meta, std::make_shared<const ByteViewContent>(mtx));
    formats::bpcells::TransposedCopy persist;
    if (!options_.index_dir.empty() && !fingerprint_.empty() && !m->row_major()) {
      persist.key = fingerprint_;
      char name[32];
      std::snprintf(name, sizeof name, "%016llx.csr", static_cast<unsigned long long>(codec::Hash64(persist.key.data(), persist.key.size())));
      persist.path = options_.index_dir + "/" + name;
      persist.rebuild = options_.sizing.index != nullptr && options_.sizing.index->rebuild();
    }
    AddText(dir, "matrix.tsv", meta, std::make_shared<const text::DenseTsvSource>(m, std::vector<std::string>{options_.index_dir}, std::move(persist)));
    AddText(dir, "rownames.txt", meta, std::make_shared<const text::NamesSource>(rows, Layout::kOnePerLine, 0, "rownames.txt of " + where));
    AddText(dir, "colnames.txt", meta, std::make_shared<const text::NamesSource>(cols, Layout::kOnePerLine, 0, "colnames.txt of " + where));
    auto barcodes = MakeText("barcodes.tsv", std::make_shared<const text::NamesSource>(
        cols, Layout::kOnePerLine, m->cols(), "barcodes.tsv of " + where, "col"));
    AddFile(dir, "barcodes.tsv", meta, std::make_shared<const ByteViewContent>(barcodes));
    AddText(dir, "genes.tsv", meta, std::make_shared<const text::NamesSource>(rows, Layout::kTwoColumns, m->rows(), "genes.tsv of " + where, "row"));
    AddTenXFolder(dir, meta, where, mtx, barcodes, std::make_shared<const text::NamesSource>(
        rows, Layout::kFeatures, m->rows(), "10x/features.tsv of " + where, "row"));
  }

  // The Cell Ranger v3 folder `10x/` (what scanpy's read_10x_mtx and Seurat's Read10X read when
  // no genes.tsv lies beside the matrix): matrix.mtx.gz and barcodes.tsv.gz are the BGZF twins
  // of the store's matrix.mtx and barcodes.tsv (the same views: sizes and cached chunks shared),
  // features.tsv.gz that of `name\tname\tGene Expression` per row.
  void AddTenXFolder(Ino dir, const Meta& meta, const std::string& where,
                     std::shared_ptr<const text::ByteView> mtx,
                     std::shared_ptr<const text::ByteView> barcodes,
                     std::shared_ptr<const text::RecordSource> features) {
    const Ino tenx = AddDir(dir, "10x", meta, /*from_file=*/true);
    if (tenx == 0) return;  // a file named 10x is already there
    AddStoredGz(tenx, "matrix.mtx.gz", meta, "10x/matrix.mtx.gz of " + where, std::move(mtx));
    AddStoredGz(tenx, "features.tsv.gz", meta, "10x/features.tsv.gz of " + where,
                MakeText("10x/features.tsv", std::move(features)));
    AddStoredGz(tenx, "barcodes.tsv.gz", meta, "10x/barcodes.tsv.gz of " + where,
                std::move(barcodes));
  }

  static bool IsBpcellsDirStore(const std::string& dir) {
    auto v = io::ReadVersion(io::LocalByteSpace(dir));
    return v.ok() && bp::LooksLikeVersion(*v);
  }

  static bool IsVczStore(const std::string& dir) {
    return formats::vcz::Store::Looks(io::SpaceBlobStore(std::make_shared<io::LocalByteSpace>(dir), 64 << 20));
  }

  void AddDirStore(Ino dir, std::shared_ptr<const io::ByteSpace> space, Meta meta, const Stamp& stamp) {
    meta.mtime = stamp.newest_mtime;  // the store's mtime: the newest of its directory and files
    meta.perm &= stamp.readable;
    fingerprint_ = stamp.index;
    auto store = io::SpaceArrayStore::Open(std::move(space));
    if (!store.ok()) return AddStoreViews(dir, meta, store.status());
    AddStoreViews(dir, meta, std::shared_ptr<const io::ArrayStore>(std::move(store).value()));
  }

  // A VCF Zarr store: STEM.vcf, sites.vcf, samples.txt.
  void AddVczStore(Ino dir, std::shared_ptr<const io::ByteSpace> space, const std::string& name, Meta meta,
                   const Stamp& stamp) {
    meta.mtime = stamp.newest_mtime;  // the store's mtime: the newest of its objects (and folder)
    meta.perm &= stamp.readable;
    fingerprint_ = stamp.index;
    const std::string path = space->Describe();
    auto store = formats::vcz::Store::Open(std::make_shared<io::SpaceBlobStore>(std::move(space)), options_.pool);
    if (!store.ok()) return AddError(dir, meta, store.status());
    std::string stem = name.empty() ? fs::path(path).filename().string() : name;
    if (stem.ends_with(".zip")) stem.resize(stem.size() - 4);
    for (const char* ext : {".vcz", ".zarr"}) {
      const size_t n = std::strlen(ext);
      if (stem.size() > n && stem.compare(stem.size() - n, n, ext) == 0) stem.resize(stem.size() - n);
    }
    using text::VcfSource;
    bool csi = false;  // a contig as long as 2^29 needs CSI
    if (const auto& lengths = (*store)->contig_lengths()) {
      for (int64_t len : *lengths) csi = csi || len >= text::kTbiMaxPosition;
    }
    AddIndexedText(dir, stem + ".vcf", meta, path, std::make_shared<const VcfSource>(*store, VcfSource::View::kFull, stem + ".vcf"),
                   text::TabixPreset::kVcf, csi);
    AddIndexedText(dir, "sites.vcf", meta, path, std::make_shared<const VcfSource>(*store, VcfSource::View::kSites, "sites.vcf"),
                   text::TabixPreset::kVcf, csi);
    auto samples = std::shared_ptr<const std::vector<std::string>>(*store, &(*store)->samples());
    AddText(dir, "samples.txt", meta, std::make_shared<const text::NamesSource>(samples, text::NamesSource::Layout::kOnePerLine, 0, "samples.txt of " + path));
    for (auto& [view, source] : text::PlinkViews(*store, stem, {options_.sizing.index, fingerprint_, meta.mtime.tv_sec})) AddText(dir, view, meta, std::move(source));
  }

  // BPCells store groups of an HDF5 file, with their versions as the vetting helper read them
  // (empty when none or not HDF5: then libhdf5 never parses it in this process). A file whose
  // signature says HDF5 but which the helper refuses (truncated, damaged, crashing libhdf5) is an
  // error: it is shown as a folder with ERROR.txt, never silently as a plain file.
  Result<std::vector<io::H5GroupAttribute>> Hdf5Stores(const std::string& path) const {
    if (!io::IsHdf5File(path)) return std::vector<io::H5GroupAttribute>();
    ASSIGN_OR_RETURN(std::vector<io::H5GroupAttribute> groups, io::VetHdf5File(options_.h5vet, path));
    std::vector<io::H5GroupAttribute> out;
    for (auto& g : groups) {
      if (bp::LooksLikeVersion(g.value)) out.push_back(std::move(g));
    }
    return out;
  }

  // `source` set: a remote file (`path` its URL), read through the ByteSource driver; its stamp
  // guards the version, so `file_stamp` only names it.
  void AddHdf5Stores(Ino dir, const std::string& path, const Meta& meta,
                     const std::vector<io::H5GroupAttribute>& stores, const Stamp& file_stamp,
                     const std::shared_ptr<const io::ByteSource>& source = nullptr) {
    for (const auto& g : stores) {
      Ino at = dir;
      size_t pos = 1;
      while (pos < g.group.size()) {  // create the intermediate group directories
        size_t slash = g.group.find('/', pos);
        if (slash == std::string::npos) slash = g.group.size();
        at = AddDir(at, g.group.substr(pos, slash - pos), meta, /*from_file=*/true);
        if (at == 0) break;
        pos = slash + 1;
      }
      if (at == 0) {
        LogWarning(path + ":" + g.group + ": group name collides with a view; not shown");
        continue;
      }
      fingerprint_ = source ? file_stamp.index + "group " + g.group + "\n" : StampOf(path + ":" + g.group, {path}).index;
      auto store = source ? io::H5ArrayStore::Open(source, g.group, g.value)
                          : io::H5ArrayStore::Open(path, g.group, file_stamp.guard, g.value);
      if (!store.ok()) {
        AddStoreViews(at, meta, store.status());
      } else {
        AddStoreViews(at, meta, std::shared_ptr<const io::ArrayStore>(std::move(store).value()));
      }
    }
  }

  // Adds `path` (of any type) as child `name` of `parent`.
  void AddEntry(Ino parent, const std::string& name, const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      LogWarning(path + ": cannot stat; not shown");
      return;
    }
    if (S_ISLNK(st.st_mode) && options_.follow_symlinks) {
      // Shown as its target, unless the target is missing or a directory being mirrored (a loop).
      struct stat target;
      if (::stat(path.c_str(), &target) == 0 && !OnMirrorPath(target)) {
        st = target;
      } else {
        LogDebug(path + ": a dangling or looping symlink; shown as the link");
      }
    }
    Meta meta = MetaOf(st);
    if (S_ISLNK(st.st_mode)) {
      fs_error ec;
      fs::path target = fs::read_symlink(path, ec);
      if (ec) return;
      Node n;
      n.name = name;
      n.kind = NodeKind::kSymlink;
      n.link_target = target.string();
      n.mtime = meta.mtime;
      n.uid = meta.uid;
      n.gid = meta.gid;
      tree_->AddChild(parent, std::move(n));
    } else if (S_ISDIR(st.st_mode)) {
      const bool bpcells = IsBpcellsDirStore(path);
      if (bpcells || IsVczStore(path)) {
        const Stamp stamp = StampOf(path, FilesBelow(path));
        if (Reuse(parent, name, stamp)) return;
        Ino dir = AddDir(parent, name, meta);
        if (dir == 0) return;
        tree_->node(dir).fingerprint = stamp.change;
        if (bpcells) {
          AddDirStore(dir, std::make_shared<io::LocalByteSpace>(path, stamp.guard), meta, stamp);
        } else {
          AddVczStore(dir, std::make_shared<io::LocalByteSpace>(path, stamp.guard), name, meta, stamp);
        }
        return;
      }
      Ino dir = AddDir(parent, name, meta);
      if (dir != 0) MirrorDir(dir, path, st);
    } else if (S_ISREG(st.st_mode)) {
      const Stamp stamp = StampOf(path, {path});
      if (IsZipStoreName(name)) {
        Meta zmeta = meta;
        zmeta.perm &= stamp.readable;
        auto archive = io::LocalByteSource::OpenPath(path, stamp.guard);
        if (AddZipStore(parent, name.substr(0, name.size() - 4), zmeta, stamp,
                        archive.ok() ? Result<std::shared_ptr<const io::ByteSource>>(*archive)
                                     : Result<std::shared_ptr<const io::ByteSource>>(archive.status()))) {
          return;
        }
      }
      if (Reuse(parent, name, stamp)) return;
      auto stores = Hdf5Stores(path);
      if (stores.ok() && stores->empty()) {
        Ino file = AddFile(parent, name, meta, std::make_shared<const LocalFileContent>(path, st, stamp.guard));
        if (file != 0) tree_->node(file).fingerprint = stamp.change;
        return;
      }
      Ino dir = AddDir(parent, name, meta, /*from_file=*/true);
      if (dir == 0) return;
      tree_->node(dir).fingerprint = stamp.change;
      if (!stores.ok()) return AddError(dir, meta, stores.status());
      AddHdf5Stores(dir, path, meta, *stores, stamp);
    }
    // Sockets, FIFOs and devices are not served.
  }

  // A datg matrix: NAME.datg/ with matrix.tsv, rownames.txt, colnames.txt.
  void AddDatgStore(Ino parent, const std::string& name, const std::string& path) {
    const std::string stem = path.substr(0, path.size() - 5);
    const Stamp stamp = StampOf(path, {path, stem + ".rows.txt.gz", stem + ".cols.txt.gz"});
    if (Reuse(parent, name, stamp)) return;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return;
    Meta meta = MetaOf(st);
    meta.perm &= stamp.readable;
    Ino dir = AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) return;
    tree_->node(dir).fingerprint = stamp.change;
    AddDatgViews(dir, path, meta, stamp);
  }

  void AddDatgViews(Ino dir, const std::string& path, const Meta& meta, const Stamp& stamp) {
    const std::string stem = path.substr(0, path.size() - 5);
    fingerprint_ = stamp.index;
    AddDatgViews(dir, meta, path, [&](const std::string& ext) -> Result<std::shared_ptr<const io::ByteSource>> {
      auto source = io::LocalByteSource::OpenPath(stem + ext, stamp.guard);
      if (!source.ok() && (source.status().sys_errno() == ENOENT || source.status().code() == ErrorCode::kNotFound)) {
        return std::shared_ptr<const io::ByteSource>();
      }
      ASSIGN_OR_RETURN(auto opened, std::move(source));
      return std::shared_ptr<const io::ByteSource>(std::move(opened));
    });
  }

  // matrix.tsv, rownames.txt, colnames.txt of the datg matrix `path`; `open(ext)` opens the
  // matrix (".datg") or a companion (".rows.txt.gz"), nullptr when it is missing.
  using OpenPart = std::function<Result<std::shared_ptr<const io::ByteSource>>(const std::string& ext)>;
  void AddDatgViews(Ino dir, const Meta& meta, const std::string& path, const OpenPart& open) {
    std::shared_ptr<const io::ByteSource> parts[3];
    const char* exts[3] = {".datg", ".rows.txt.gz", ".cols.txt.gz"};
    std::string missing;
    for (int i = 0; i < 3; ++i) {
      auto part = open(exts[i]);
      if (!part.ok()) return AddError(dir, meta, part.status());
      parts[i] = std::move(part).value();
      if (parts[i] == nullptr) missing += (missing.empty() ? "" : ", ") + fs::path(path.substr(0, path.size() - 5) + exts[i]).filename().string();
    }
    if (!missing.empty()) {
      return AddError(dir, meta, NotFoundError(path + ": a datg matrix needs its name files beside it; missing " + missing));
    }
    auto file = formats::datg::DatgFile::Open(parts[0], *parts[1], *parts[2]);
    if (!file.ok()) return AddError(dir, meta, file.status());
    const auto& f = *file;
    using Layout = text::NamesSource::Layout;
    AddText(dir, "matrix.tsv", meta, std::make_shared<const text::DatgTsvSource>(f));
    AddText(dir, "rownames.txt", meta, std::make_shared<const text::NamesSource>(
        std::shared_ptr<const std::vector<std::string>>(f, &f->row_names()), Layout::kOnePerLine, 0, "rownames.txt of " + path));
    AddText(dir, "colnames.txt", meta, std::make_shared<const text::NamesSource>(
        std::shared_ptr<const std::vector<std::string>>(f, &f->col_names()), Layout::kOnePerLine, 0, "colnames.txt of " + path));
  }

  // NAME.vcz.zip / NAME.zarr.zip: a zipped Zarr store, shown as NAME.vcz/ (bio2zarr's layout and
  // zarr's ZipStore: the store's keys at the archive root).
  static bool IsZipStoreName(const std::string& n) {
    return n.ends_with(".vcz.zip") || n.ends_with(".zarr.zip");
  }

  // The zipped store `archive` as `parent`/`name` (name "": the root). False when the archive
  // holds no VCF Zarr store (then it is an ordinary file); a damaged archive is ERROR.txt.
  bool AddZipStore(Ino parent, const std::string& name, const Meta& meta, const Stamp& stamp,
                   Result<std::shared_ptr<const io::ByteSource>> archive) {
    Result<std::shared_ptr<const io::ByteSpace>> space =
        archive.ok() ? io::OpenZipSpace(*archive) : Result<std::shared_ptr<const io::ByteSpace>>(archive.status());
    if (space.ok() && !formats::vcz::Store::Looks(io::SpaceBlobStore(*space, 64 << 20))) return false;
    if (Reuse(parent, name, stamp)) return true;
    const Ino dir = name.empty() ? kRootIno : AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) {
      LogWarning(tree_->PathOf(parent) + "/" + name + ": a zipped store and a folder of that name; the zip is not shown");
      return true;
    }
    tree_->node(dir).fingerprint = stamp.change;
    if (!space.ok()) {
      AddError(dir, meta, space.status());
      return true;
    }
    AddVczStore(dir, *space, name, meta, stamp);
    return true;
  }

  static bool IsDatgName(const std::string& n) { return n.size() > 5 && n.compare(n.size() - 5, 5, ".datg") == 0; }

  // Whether `st` is a directory on the path being mirrored (a symlink to it would loop).
  bool OnMirrorPath(const struct stat& st) const {
    return std::any_of(mirror_path_.begin(), mirror_path_.end(),
                       [&](const auto& d) { return d.first == st.st_dev && d.second == st.st_ino; });
  }

  bool IsIndexDir(const std::string& name, const std::string& path) const {
    if (index_name_.empty() || name != index_name_) return false;
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == index_dev_ && st.st_ino == index_ino_;
  }

  void MirrorDir(Ino dir, const std::string& path, const struct stat& st) {
    mirror_path_.emplace_back(st.st_dev, st.st_ino);
    fs_error ec;
    std::vector<std::string> names;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    if (ec) LogWarning(path + ": cannot list: " + ec.message());
    std::sort(names.begin(), names.end());
    // datg matrices consume their companions (names, checksums).
    std::set<std::string> consumed, datg;
    for (const auto& n : names) {
      if (!IsDatgName(n)) continue;
      struct stat fst;
      const int r = options_.follow_symlinks ? ::stat((path + "/" + n).c_str(), &fst) : ::lstat((path + "/" + n).c_str(), &fst);
      if (r != 0 || !S_ISREG(fst.st_mode)) continue;
      datg.insert(n);
      const std::string stem = n.substr(0, n.size() - 5);
      for (const char* ext : {".rows.txt.gz", ".cols.txt.gz", ".sha256", ".md5"}) consumed.insert(stem + ext);
    }
    for (const auto& n : names) {
      if (consumed.count(n) && !datg.count(n)) continue;
      if (IsIndexDir(n, path + "/" + n)) {
        LogDebug(path + "/" + n + ": the index directory, not mirrored");
        continue;
      }
      if (datg.count(n)) {
        AddDatgStore(dir, n, path + "/" + n);
      } else {
        AddEntry(dir, n, path + "/" + n);
      }
    }
    mirror_path_.pop_back();
  }

  // The hidden control folder: found by lookup, never listed.
  void AddControlFolder() {
    if (options_.control_files.empty()) return;
    const Node& root = tree_->root();
    if (auto it = root.children.find(kControlDir); it != root.children.end()) {
      // Copied with an unchanged single-store root on a rescan, or a real file of that name.
      if (!tree_->node(it->second).hidden) {
        LogWarning(std::string("SOURCE has an entry named ") + kControlDir + "; the control folder is not shown");
      }
      return;
    }
    Meta meta;
    meta.perm = root.perm & 0444;
    meta.mtime = root.mtime;
    meta.uid = root.uid;
    meta.gid = root.gid;
    const Ino dir = AddDir(kRootIno, kControlDir, meta, /*from_file=*/true);
    tree_->node(dir).hidden = true;
    for (const auto& [name, content] : options_.control_files) AddFile(dir, name, meta, content);
  }

  Status BuildRoot(const std::string& source) {
    struct stat st;
    if (::stat(source.c_str(), &st) != 0) return IoError(source, errno);
    Meta meta = MetaOf(st);
    Node& root = tree_->root();
    root.perm = DirPerm(meta, /*from_file=*/S_ISREG(st.st_mode));
    root.mtime = meta.mtime;
    root.uid = meta.uid;
    root.gid = meta.gid;
    if (S_ISDIR(st.st_mode)) {
      const bool bpcells = IsBpcellsDirStore(source);
      if (bpcells || IsVczStore(source)) {
        const Stamp stamp = StampOf(source, FilesBelow(source));
        if (Reuse(kRootIno, "", stamp)) return OkStatus();
        root.fingerprint = stamp.change;
        if (bpcells) {
          AddDirStore(kRootIno, std::make_shared<io::LocalByteSpace>(source, stamp.guard), meta, stamp);
        } else {
          AddVczStore(kRootIno, std::make_shared<io::LocalByteSpace>(source, stamp.guard), fs::path(source).filename().string(), meta, stamp);
        }
      } else {
        MirrorDir(kRootIno, source, st);
      }
      return OkStatus();
    }
    if (!S_ISREG(st.st_mode)) return InvalidArgumentError(source + ": not a directory or regular file");
    if (IsDatgName(source)) {  // a single datg matrix: its views at the root
      const std::string stem = source.substr(0, source.size() - 5);
      const Stamp stamp = StampOf(source, {source, stem + ".rows.txt.gz", stem + ".cols.txt.gz"});
      if (Reuse(kRootIno, "", stamp)) return OkStatus();
      root.fingerprint = stamp.change;
      meta.perm &= stamp.readable;
      AddDatgViews(kRootIno, source, meta, stamp);
      return OkStatus();
    }
    const Stamp stamp = StampOf(source, {source});
    if (IsZipStoreName(source)) {  // a zipped store: its views at the root
      meta.perm &= stamp.readable;
      auto archive = io::LocalByteSource::OpenPath(source, stamp.guard);
      if (AddZipStore(kRootIno, "", meta, stamp,
                      archive.ok() ? Result<std::shared_ptr<const io::ByteSource>>(*archive)
                                   : Result<std::shared_ptr<const io::ByteSource>>(archive.status()))) {
        root.fingerprint = stamp.change;
        return OkStatus();
      }
    }
    if (Reuse(kRootIno, "", stamp)) return OkStatus();
    ASSIGN_OR_RETURN(auto stores, Hdf5Stores(source));
    if (stores.empty()) {
      return InvalidArgumentError(source + ": not a directory, a datg matrix or an HDF5 file with BPCells stores");
    }
    root.fingerprint = stamp.change;
    AddHdf5Stores(kRootIno, source, meta, stores, stamp);
    return OkStatus();
  }

  // ---- A SOURCE held by a ByteSpace (s3://, https://; local folders in tests) ----
  // Objects have no owner here: they are the mounting user's, readable (perm from the backend).

  static Meta SpaceMeta(const io::ObjectInfo& info) {
    Meta m;
    m.perm = info.perm & 0444;
    m.mtime = info.mtime;
    m.uid = ::getuid();
    m.gid = ::getgid();
    return m;
  }

  static std::string Join(const std::string& folder, const std::string& name) {
    return folder.empty() ? name : folder + "/" + name;
  }

  // A store's identity from its objects' stamps (remote: ETag, Last-Modified, size).
  static Result<Stamp> SpaceStampOf(const io::ByteSpace& space, const std::vector<std::string>& keys_or_folder,
                                    bool folder) {
    Stamp s;
    s.index = "store " + space.Describe() + "\n";
    std::vector<io::ByteSpace::KeyInfo> objects;
    if (folder) {
      ASSIGN_OR_RETURN(objects, space.ListRecursive(keys_or_folder.empty() ? "" : keys_or_folder.front()));
    } else {
      for (const std::string& key : keys_or_folder) {
        ASSIGN_OR_RETURN(std::shared_ptr<const io::ByteSource> source, space.Open(key));
        if (source != nullptr) objects.push_back({key, source->Info()});
      }
    }
    for (const auto& o : objects) {
      s.index += o.key + " " + o.info.stamp + "\n";
      s.readable &= o.info.perm;
      if (Later(o.info.mtime, s.newest_mtime)) s.newest_mtime = o.info.mtime;
    }
    s.change = s.index;
    return s;
  }

  // The store `space` holds, as `parent`/`name` (name "": the root itself); false when the
  // listing shows none. Recognised from the listing first, so a plain folder costs no request.
  bool AddSpaceStore(Ino parent, const std::string& name, const std::shared_ptr<const io::ByteSpace>& space,
                     const std::vector<io::ListEntry>& listed, Meta meta) {
    auto has = [&](const char* n) {
      return std::any_of(listed.begin(), listed.end(), [&](const io::ListEntry& e) {
        return e.kind == io::EntryKind::kFile && e.name == n;
      });
    };
    const bool maybe_bpcells = has("version"), maybe_zarr = has(".zgroup") || has("zarr.json");
    if (!maybe_bpcells && !maybe_zarr) return false;
    // The stamp first: after its recursive listing the probes below and the store's opening
    // answer absent keys without a request (io/s3: a v2 store's zarr.json probes, ~1 per array).
    auto stamp = SpaceStampOf(*space, {}, /*folder=*/true);
    bool bpcells = false, vcz = false;
    if (maybe_bpcells) {
      auto v = io::ReadVersion(*space);
      bpcells = v.ok() && bp::LooksLikeVersion(*v);
    }
    if (!bpcells && maybe_zarr) vcz = formats::vcz::Store::Looks(io::SpaceBlobStore(space, 64 << 20));
    if (!bpcells && !vcz) return false;
    if (stamp.ok() && Reuse(parent, name, *stamp)) return true;
    const Ino dir = name.empty() ? kRootIno : AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) return true;
    if (!stamp.ok()) {
      AddError(dir, meta, stamp.status());
      return true;
    }
    tree_->node(dir).fingerprint = stamp->change;
    if (bpcells) {
      AddDirStore(dir, space, meta, *stamp);
    } else {
      AddVczStore(dir, space, name.empty() ? fs::path(space->Describe()).filename().string() : name, meta, *stamp);
    }
    return true;
  }

  // A datg matrix `key` of `space` (with its companions beside it) as `parent`/`name`.
  void AddSpaceDatg(Ino parent, const std::string& name, const std::shared_ptr<const io::ByteSpace>& space,
                    const std::string& key, Meta meta) {
    const std::string stem = key.substr(0, key.size() - 5);
    auto stamp = SpaceStampOf(*space, {key, stem + ".rows.txt.gz", stem + ".cols.txt.gz"}, /*folder=*/false);
    if (stamp.ok() && Reuse(parent, name, *stamp)) return;
    const Ino dir = name.empty() ? kRootIno : AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) return;
    if (!stamp.ok()) return AddError(dir, meta, stamp.status());
    tree_->node(dir).fingerprint = stamp->change;
    fingerprint_ = stamp->index;
    AddDatgViews(dir, meta, space->Where(key), [&](const std::string& ext) { return space->Open(stem + ext); });
  }

  // The entries of `folder` (listed as `listed`) into `dir`.
  void MirrorSpace(Ino dir, const std::shared_ptr<const io::ByteSpace>& space, const std::string& folder,
                   const std::vector<io::ListEntry>& listed, int depth) {
    std::set<std::string> consumed;  // datg companions
    for (const auto& e : listed) {
      if (e.kind != io::EntryKind::kFile || !IsDatgName(e.name)) continue;
      const std::string stem = e.name.substr(0, e.name.size() - 5);
      for (const char* ext : {".rows.txt.gz", ".cols.txt.gz", ".sha256", ".md5"}) consumed.insert(stem + ext);
    }
    for (const auto& e : listed) {
      const std::string key = Join(folder, e.name);
      Meta meta = SpaceMeta(e.info);
      if (e.kind == io::EntryKind::kDirectory) {
        if (depth >= kMaxSpaceDepth) {
          LogWarning(space->Where(key) + ": deeper than " + std::to_string(kMaxSpaceDepth) + " folders; not shown");
          continue;
        }
        if (meta.mtime.tv_sec == 0 && meta.mtime.tv_nsec == 0) meta.mtime = StartTime();
        // Lazy unless the served tree had built it (a rescan compares what was opened).
        const std::string vpath = Join(tree_->PathOf(dir), e.name);
        if (lazy_ == nullptr || (options_.previous != nullptr && options_.previous->Loaded(vpath))) {
          AddSpaceFolder(dir, e.name, space, key, meta, depth);
        } else {
          AddLazyFolder(dir, e.name, space, key, meta, depth);
        }
      } else if (IsDatgName(e.name)) {
        AddSpaceDatg(dir, e.name, space, key, meta);
      } else if (IsZipStoreName(e.name) && AddSpaceZip(dir, e.name.substr(0, e.name.size() - 4), space, key, meta)) {
        continue;
      } else if (!consumed.count(e.name)) {
        AddSpaceFile(dir, e.name, space, key, meta);
      }
    }
  }

  // The folder `key` of `space` as `parent`/`name` (name "": `parent` is the root and is it): a
  // store when its listing shows one, else mirrored. A folder that cannot be listed holds
  // ERROR.txt naming its URL.
  void AddSpaceFolder(Ino parent, const std::string& name, const std::shared_ptr<const io::ByteSpace>& space,
                      const std::string& key, const Meta& meta, int depth) {
    auto sub = io::SubSpace(space, key);
    auto children = sub->List("");
    if (children.ok() && AddSpaceStore(parent, name, sub, *children, meta)) return;
    const Ino dir = name.empty() ? kRootIno : AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) return;
    if (!children.ok()) return AddError(dir, meta, children.status());
    MirrorSpace(dir, space, key, *children, depth + 1);
  }

  // `parent`/`name`, built by AddSpaceFolder when first looked into (Tree::Load): a mount of
  // a bucket answers after one listing of its root instead of opening every store first
  // (the corpus: ~50 stores, 28 s over Swift).
  void AddLazyFolder(Ino parent, const std::string& name, const std::shared_ptr<const io::ByteSpace>& space,
                     const std::string& key, const Meta& meta, int depth) {
    const Ino dir = AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) return;
    auto loader = std::make_shared<DirLoader>();
    loader->load = [lazy = lazy_, space, key, meta, depth] {
      auto sub = std::make_unique<Tree>();
      Builder b(sub.get(), *lazy, lazy);
      b.AddSpaceFolder(kRootIno, "", space, key, meta, depth);
      return sub;
    };
    tree_->node(dir).loader = std::move(loader);
  }

  bool AddSpaceZip(Ino parent, const std::string& name, const std::shared_ptr<const io::ByteSpace>& space,
                   const std::string& key, const Meta& meta) {
    auto stamp = SpaceStampOf(*space, {key}, /*folder=*/false);
    if (!stamp.ok()) {
      LogWarning(space->Where(key) + ": " + stamp.status().message());
      return false;
    }
    Result<std::shared_ptr<const io::ByteSource>> archive = space->Open(key);
    if (archive.ok() && *archive == nullptr) archive = NotFoundError(space->Where(key) + ": gone since the listing");
    return AddZipStore(parent, name, meta, *stamp, std::move(archive));
  }

  void AddSpaceFile(Ino dir, const std::string& name, const std::shared_ptr<const io::ByteSpace>& space,
                    const std::string& key, const Meta& meta) {
    auto source = space->Open(key);
    if (!source.ok() || *source == nullptr) {
      LogWarning(space->Where(key) + ": cannot open; not shown" +
                 (source.ok() ? std::string(" (gone since the listing)") : ": " + source.status().message()));
      return;
    }
    if (IsHdf5Name(name) && AddSpaceHdf5(dir, name, *source, meta)) return;
    const Ino file = AddFile(dir, name, meta, std::make_shared<const ByteSourceContent>(*source));
    if (file != 0) tree_->node(file).fingerprint = "object " + (*source)->Describe() + " " + (*source)->Info().stamp;
  }

  // A remote object with the HDF5 signature and BPCells store groups as `parent`/`name` (name "":
  // the root), a folder of stores as a local HDF5 file is (FILE.h5/GROUP/...): vetted by the
  // helper, which reads the same URL, then read through the ByteSource driver (io/h5_vfd.h) and
  // the space's block cache. One source serves every group, so they share its cached blocks and
  // libhdf5's open file. A file the helper refuses is a folder with ERROR.txt. False when it is
  // not HDF5 or holds no stores: then it is a plain file (one whose fingerprint is unchanged on a
  // rescan has been copied, and true is returned).
  // Remote objects are probed for the HDF5 signature only when named like HDF5 files. Why: each
  // probe is a request (a block of up to 1 MiB); with every object probed, the S3 corpus bucket
  // of remote_test (311 plain files beside its stores) took over 170 s to mount instead of ~10.
  static bool IsHdf5Name(const std::string& n) {
    for (const char* ext : {".h5", ".hdf5", ".he5", ".hdf", ".h5ad", ".loom"}) {
      if (n.ends_with(ext)) return true;
    }
    return false;
  }

  bool AddSpaceHdf5(Ino parent, const std::string& name, const std::shared_ptr<const io::ByteSource>& source,
                    Meta meta) {
    const io::ObjectInfo& info = source->Info();
    Stamp stamp;
    stamp.index = "object " + source->Describe() + " " + info.stamp + "\n";
    stamp.change = stamp.index;  // the fingerprint AddSpaceFile gives it as a plain file
    if (Reuse(parent, name, stamp)) return true;
    auto hdf5 = io::IsHdf5Source(*source);
    if (!hdf5.ok()) LogWarning(source->Describe() + ": " + hdf5.status().message() + "; shown as a plain file");
    if (!hdf5.ok() || !*hdf5) return false;
    auto groups = io::VetHdf5File(options_.h5vet, source);
    std::vector<io::H5GroupAttribute> stores;
    if (groups.ok()) {
      for (auto& g : *groups) {
        if (bp::LooksLikeVersion(g.value)) stores.push_back(std::move(g));
      }
      if (stores.empty()) return false;
    }
    meta.perm &= info.perm;
    const Ino dir = name.empty() ? kRootIno : AddDir(parent, name, meta, /*from_file=*/true);
    if (dir == 0) return true;
    tree_->node(dir).fingerprint = stamp.change;
    if (!groups.ok()) {
      AddError(dir, meta, groups.status());
    } else {
      AddHdf5Stores(dir, source->Describe(), meta, stores, stamp, source);
    }
    return true;
  }

  Status BuildSpaceRoot(const std::shared_ptr<const io::ByteSpace>& space, const std::string& key) {
    Node& root = tree_->root();
    Meta meta = SpaceMeta(io::ObjectInfo{});
    root.perm = DirPerm(meta, /*from_file=*/true);
    root.uid = meta.uid;
    root.gid = meta.gid;
    if (!key.empty()) {
      if (IsDatgName(key)) {
        AddSpaceDatg(kRootIno, "", space, key, meta);
      } else if ((!IsZipStoreName(key) || !AddSpaceZip(kRootIno, "", space, key, meta)) &&
                 !AddSpaceHdf5Root(space, key, meta)) {
        return InvalidArgumentError(space->Where(key) +
                                    ": not a datg matrix, a zipped VCF Zarr store or an HDF5 file with BPCells stores");
      }
      return OkStatus();
    }
    ASSIGN_OR_RETURN(std::vector<io::ListEntry> listed, space->List(""));
    if (AddSpaceStore(kRootIno, "", space, listed, meta)) return OkStatus();
    if (listed.empty()) LogWarning(space->Describe() + ": holds nothing");
    MirrorSpace(kRootIno, space, "", listed, 0);
    return OkStatus();
  }

  bool AddSpaceHdf5Root(const std::shared_ptr<const io::ByteSpace>& space, const std::string& key, const Meta& meta) {
    auto source = space->Open(key);
    if (!source.ok() || *source == nullptr) {
      LogError(space->Where(key) + ": " + (source.ok() ? std::string("not found") : source.status().message()));
      return false;
    }
    return AddSpaceHdf5(kRootIno, "", *source, meta);
  }

  static constexpr int kMaxSpaceDepth = 32;

 private:
  Tree* tree_;
  const DiscoverOptions& options_;
  const std::shared_ptr<const DiscoverOptions> lazy_;
  dev_t index_dev_ = 0;
  ino_t index_ino_ = 0;
  std::string index_name_;  // empty: no index directory to hide
  std::string fingerprint_;  // of the store whose views are being added
  std::vector<std::pair<dev_t, ino_t>> mirror_path_;  // directories being mirrored, outermost first
};

}  // namespace

Result<std::shared_ptr<Tree>> Discover(const std::string& source, const DiscoverOptions& options) {
  if (options.pool == nullptr) return InternalError("Discover: no cache pool");
  if (options.space != nullptr) {
    auto lazy = std::make_shared<DiscoverOptions>(options);
    lazy->previous = nullptr;  // a folder built later is built afresh
    auto tree = std::make_shared<Tree>();
    Builder b(tree.get(), options, std::move(lazy));
    RETURN_IF_ERROR(b.BuildSpaceRoot(options.space, options.space_key));
    b.AddControlFolder();
    return tree;
  }
  // Absolute paths: the daemon changes directory to / when it detaches.
  fs_error ec;
  const std::string absolute = fs::absolute(source, ec).lexically_normal().string();
  if (ec) return IoError(source, ec.value());
  auto tree = std::make_shared<Tree>();
  Builder b(tree.get(), options);
  RETURN_IF_ERROR(b.BuildRoot(absolute.size() > 1 && absolute.back() == '/' ? absolute.substr(0, absolute.size() - 1) : absolute));
  b.AddControlFolder();
  return tree;
}

}  // namespace omicsfs::vfs
