// The virtual tree. Discovery builds it on one thread; once shared, every query is thread-safe
// (a shared lock, never held across content work such as a sizing pass or a read).
//
// Live changes: a rescan builds a fresh tree (reusing unchanged subtrees, see CopyInto) and
// Merge() grafts it in. Inode numbers are stable: a node keeps its inode for as long as it is
// unchanged, and a changed or removed node is detached, never reused, so the kernel's page cache
// of an old file can never mix with the new one. A detached node keeps its content until the
// kernel forgets it (lookup counts, as FUSE defines them); open files hold their own reference.
//
// Lazy directories (Node::loader, remote SOURCEs): Lookup inside one and ReadDir of one build its
// children first, once (single-flight: concurrent callers wait for the one load and never see
// half a directory), then graft them in under the exclusive lock. GetAttr does not load (a
// pending directory shows nlink 1, "subdirectories unknown"), so `ls -l` of a folder of 10 000
// stores opens none. A directory loaded on demand starts loading its pending siblings in the
// background, and a background load its pending children (kPrefetchThreads at once): `ls -R`
// or `omicsfs index` over a bucket opens its stores in parallel, each being I/O bound.
//
// Folders made on lookup (Node::resolver, vfs/resolver.h): a lookup that misses in a directory
// carrying a resolver asks it (no tree lock held) whether the name is a hidden child; if so the
// child is added then (once: concurrent lookups of the name get the same inode), hidden (never
// listed) and lazy (its DirLoader builds it as above; a resolver on the built tree's root, or
// any directory in it, is kept, so made folders compose). A store (the outermost directory
// carrying a resolver) keeps at most its resolver's max_folders() made folders at any depth:
// past that, the least recently used (looked up, listed or opened into) whose whole subtree has
// lookup count 0 are detached; held ones stay, and the excess goes at the forget that frees one.
// A dropped folder looked up again is made anew, with a new inode. Made folders are never
// copied (CopyInto): a merge keeps them while their directory's resolver is the same object (an
// unchanged store, copied with its resolver) and detaches them otherwise.
//
// Withdrawn files (FileContent::Withdrawn): content that turned out not to exist once worked out
// (a region index tabix refuses) is hidden from listings and lookups at once, never copied by a
// rescan, and dropped from its folder at TakeWithdrawn (mount/ then tells the kernel).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "vfs/node.h"
#include "vfs/resolver.h"

namespace omicsfs::vfs {

class Tree {
 public:
  Tree();   // creates the root directory
  ~Tree();  // stops the background loads (one being run finishes first)
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  // Building (one thread, before the tree is shared).
  Node& root() { return nodes_[0]; }
  Node& node(Ino ino) { return nodes_[ino - 1]; }
  // Adds a child; if the name is taken, returns the existing child's inode when it is of the same
  // kind (directories merge), else 0.
  Ino AddChild(Ino parent, Node child);
  // The slash-separated path of `ino` from the root ("" for the root).
  std::string PathOf(Ino ino) const;
  // If this tree has a node at `vpath` whose fingerprint equals `fingerprint`, copies it with its
  // subtree (sharing file contents) into `dst` as a child of `dst_parent` (or, for the root, onto
  // dst's root) and returns true.
  bool CopyInto(std::string_view vpath, std::string_view fingerprint, Tree& dst,
                Ino dst_parent) const;

  // Whether the node at `vpath` exists with its children built (a rescan opens again only what
  // was opened; never loads anything itself).
  bool Loaded(std::string_view vpath) const;

  // Queries (thread-safe). Lookup, ReadDir and Resolve build a lazy directory they look into.
  Result<Ino> Lookup(Ino parent, std::string_view name) const;
  // Lookup that takes the kernel's reference (Remember) under the same lock that found the node:
  // no rescan or trim can free it between the two (the FUSE lookup handler; Forget on failure).
  Result<Ino> LookupAndRemember(Ino parent, std::string_view name) const;
  Result<Attr> GetAttr(Ino ino) const;
  Result<NodeKind> Kind(Ino ino) const;
  // `load` false: a lazy directory not built yet lists as empty (the status file's walk).
  Result<std::vector<DirEntry>> ReadDir(Ino ino, bool load = true) const;
  // Whether `ino` is a lazy directory whose children are not built yet.
  bool Pending(Ino ino) const;
  // Refuses write access (EROFS) and directories; returns what an open file reads from.
  Result<std::shared_ptr<const FileContent>> Open(Ino ino, int flags) const;
  Result<std::vector<text::Piece>> Read(Ino ino, uint64_t offset, uint64_t length) const;
  Result<std::string> ReadLink(Ino ino) const;
  // Resolves a slash-separated path from the root ("" or "/" is the root; symlinks not followed).
  Result<Ino> Resolve(std::string_view path) const;
  size_t size() const;

  // The kernel's references (FUSE lookup counts): +1 per entry replied, -n per forget.
  void Remember(Ino ino);
  void Forget(Ino ino, uint64_t n);

  // What a merge changed, for the kernel's caches.
  struct Changes {
    std::vector<Ino> inodes;                           // attributes / listings / data to drop
    std::vector<std::pair<Ino, std::string>> entries;  // (parent, name) lookups to drop
    // For the log, one line per changed store or source file (never per view inside a store):
    // "changed: PATH", "added: PATH", "removed: PATH".
    std::vector<std::string> described;
    bool empty() const { return inodes.empty() && entries.empty(); }
  };
  // Grafts `fresh` (a newly discovered tree) in: unchanged nodes keep their inodes; changed and
  // vanished ones are detached; new ones get new inodes.
  Changes Merge(const Tree& fresh);

  static constexpr unsigned kPrefetchThreads = 8;
  static constexpr std::chrono::seconds kReuseAfter{1};  // a freed inode's quarantine
  // Folders made on lookup alive now (every store's).
  size_t made_folders() const;
  // Made folders past their store's bound that the kernel still holds (its dentry cache keeps
  // every folder ever visited): (parent, name) entries to ask it to drop (FUSE
  // notify_inval_entry), after which its forget lets the folder go. Waits up to `wait` for some;
  // empty after Stop().
  std::vector<std::pair<Ino, std::string>> TakeReleases(std::chrono::milliseconds wait) const;
  void StopReleases() const;

  // Withdrawn files (FileContent::Withdrawn: content found not to exist, e.g. a region index
  // tabix refuses) are neither listed nor found by lookup from the moment their content says so.
  // NoteWithdrawn: some content just did (wakes TakeReleases). TakeWithdrawn: after a note, drops
  // every withdrawn file from its folder and returns the (parent, name) entries, whose entries and
  // folders' listings the kernel is to drop (it caches listings); empty without a note.
  void NoteWithdrawn() const;
  std::vector<std::pair<Ino, std::string>> TakeWithdrawn();
  // False while a file of directory `ino` may still be withdrawn (FileContent::MayBeWithdrawn):
  // the kernel is then not to keep the listing, so that the one after a pass's verdict comes
  // from the tree, not from before it.
  bool ListingSettled(Ino ino) const;

 private:
  // Builds the lazy directory `ino` if it still is one; then queues for the background its
  // pending siblings (`background` false) or its pending children (true).
  void Load(Ino ino, bool background) const;
  void Graft(Ino ino, const Tree& sub);  // under the exclusive lock
  void Prefetch(const std::vector<Ino>& inos) const;
  void PrefetchLoop() const;
  Result<Ino> LookupImpl(Ino parent, std::string_view name, bool load, bool remember = false) const;
  // Made folders (vfs/resolver.cc). MakeFolder: the child `name` of `parent` made from what
  // `resolver` answered (0 when `parent` no longer carries `resolver`: ask again).
  Ino MakeFolder(Ino parent, std::string_view name,
                 const std::shared_ptr<const DirResolver>& resolver, ResolvedDir made,
                 bool remember = false);
  void TouchLocked(Ino ino) const;
  // The made folder `folder`, still `parent`'s child `name`, dropped (its inputs changed).
  void DropMade(Ino parent, std::string_view name,
                Ino folder);       // marks the made folders `ino` is in as used (shared lock)
  void Trim(Ino store, Ino keep);  // detaches unheld LRU folders past the bound (exclusive lock)
  bool Held(Ino ino) const;        // whether the kernel holds a node of the subtree
  Result<Ino> ResolveImpl(std::string_view path, bool load) const;
  const Node* GetLocked(Ino ino) const;
  std::string PathOfLocked(Ino ino) const;
  // `quiet`: inside a store already described as changed.
  void MergeDir(Ino live, const Tree& fresh, Ino from, Changes& changes, bool quiet);
  Ino CopyFrom(const Tree& src, Ino from, Ino parent);
  void Detach(Ino ino);
  void ReleaseIfUnused(Ino ino);
  void Free(Ino ino);  // a detached node nobody refers to: its slot goes back for reuse

  mutable std::shared_mutex mu_;
  std::deque<Node> nodes_;  // stable addresses; never shrinks
  mutable std::deque<std::atomic<uint64_t>>
      lookups_;  // per node, same index (lookups take references)
  // Freed inodes, oldest first, reused once they have been free a while (a lookup that found a
  // node just before it went must not have its reply name a new one): slices visited by the
  // hundred thousand reuse the same few nodes.
  std::deque<std::pair<Ino, std::chrono::steady_clock::time_point>> freed_;
  // Release requests (TakeReleases), under their own mutex.
  mutable std::mutex release_mu_;
  mutable std::condition_variable release_cv_;
  mutable std::vector<std::pair<Ino, std::string>> releases_;
  mutable bool releases_stopped_ = false;
  mutable bool withdrawn_noted_ = false;  // under release_mu_
  MadeFolders made_;                      // the made folders alive, per store

  // Background loads: a queue of lazy directories and the threads (started on first use, so
  // never before the daemon forks) that build them.
  mutable std::mutex prefetch_mu_;
  mutable std::condition_variable prefetch_cv_;
  mutable std::deque<Ino> prefetch_queue_;
  mutable std::set<Ino> prefetch_queued_;
  mutable std::vector<std::thread> prefetch_threads_;
  mutable bool prefetch_stop_ = false;
};

}  // namespace omicsfs::vfs
