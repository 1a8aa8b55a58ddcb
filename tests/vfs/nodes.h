// Nodes for tests that build trees by hand.
#pragma once

#include <memory>
#include <string>

#include "vfs/node.h"

namespace omicsfs::vfs::test_nodes {

inline Node Dir(const std::string& name) {
  Node n;
  n.name = name;
  n.kind = NodeKind::kDirectory;
  n.perm = 0555;
  return n;
}

// A file holding `text` (served uncached, as a snapshot).
inline Node File(const std::string& name, const std::string& text) {
  Node n;
  n.name = name;
  n.kind = NodeKind::kFile;
  n.perm = 0444;
  n.content = std::make_shared<const SnapshotContent>(text);
  return n;
}

}  // namespace omicsfs::vfs::test_nodes
