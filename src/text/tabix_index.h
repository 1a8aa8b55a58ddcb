// Region indexes of coordinate views: the bytes htslib 1.16 `tabix -p vcf|bed [-C]` writes
// (before BGZF compression) for the BGZF twin of a view, built in one pass from each record's
// (contig, begin, end, virtual offset). The rules are htslib's (tbx.c, hts.c), reimplemented:
// - a line's interval (tbx_parse1): VCF [POS−1, POS−1+len(REF)), or up to INFO/END when that is
//   past the start; BED [col2, col3);
// - hts_idx_push: one bin per record (reg2bin), a chunk per run of records in one bin, the
//   linear index (first record start per 16 kb window), a pseudo-bin per contig holding its
//   [first, last) offsets and record counts;
// - hts_idx_finish: small bins merged into their parent, chunks within one BGZF block merged;
// - bins are written in the order of htslib's hash table (khash, reproduced here).
// Errors are what tabix refuses: unsorted positions, a contig in two separate blocks, an end
// before its begin, a position beyond what the format holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codec/bgzf.h"
#include "text/record_source.h"
#include "util/status.h"

namespace omicsfs::text {

// kBcf: what `bcftools index -c` writes for a BCF (hts.c's bcf_index): CSI, levels from the
// header's longest contig, contigs numbered as the header lists them, no tabix meta.
enum class TabixPreset { kVcf, kBed, kBcf };

// A line's interval as tbx_parse1 computes it (no newline in `line`); false when tabix would skip
// the line as unparsable.
bool ParseTabixLine(TabixPreset preset, std::string_view line, std::string_view* contig,
                    int64_t* begin, int64_t* end);

// With CSI: the largest ##contig length of VCF header lines (tabix sizes the levels from it).
void NoteVcfContigLength(std::string_view meta_line, int64_t* max_ref_len);

// Whether a failed push is tabix refusing the records (unsorted, an end before its begin, a
// position the format cannot hold: the builder's checks, kCorrupt or kUnsupported), as opposed
// to a fault of the builder's use (kInternal). Only the records decide it: the builder reads
// nothing.
inline bool TabixRefuses(const Status& st) {
  return st.code() == ErrorCode::kCorrupt || st.code() == ErrorCode::kUnsupported;
}

// TBI holds positions up to 2^29; beyond that only CSI.
inline constexpr int64_t kTbiMaxPosition = int64_t{1} << 29;

class TabixIndexBuilder {
 public:
  // `offset0`: virtual offset where the first record starts (after leading header lines);
  // `layout`: the twin's blocks (PushSameContigRun's virtual offsets); `contigs` (kBcf): the
  // header's contigs, whose order numbers them.
  TabixIndexBuilder(TabixPreset preset, bool csi, uint64_t offset0, int64_t max_ref_len = 0,
                    codec::bgzf::StoredLayout layout = codec::bgzf::kBgzipLayout,
                    const std::vector<std::string>& contigs = {});
  ~TabixIndexBuilder();

  // One record, in file order; `end_voffset` is the virtual offset just past its line.
  Status Push(std::string_view contig, int64_t begin, int64_t end, uint64_t end_voffset);
  // As Push, for a record of the contig of the last record pushed (its name not compared again;
  // a record of another contig, or the first record, must come through Push).
  Status PushSameContig(int64_t begin, int64_t end, uint64_t end_voffset);
  // Records r[0..n) of a chunk starting at `chunk_start` of the twin's text, all of the contig of
  // the last record pushed and each followed by another record (none ends the text): PushSameContig
  // of each at the virtual offset of its line's end, in one call. On an error, `*pushed` is the
  // index of the record refused.
  Status PushSameContigRun(const RecordSpan* r, size_t n, uint64_t chunk_start, size_t* pushed);
  // The index file's uncompressed bytes; `final_voffset` is where reading ends (the EOF block).
  std::string Finish(uint64_t final_voffset);

  struct Ref;  // one contig's bins and linear index

 private:
  std::string Serialize() const;
  Status PushTo(int tid, int64_t begin, int64_t end, uint64_t end_voffset);
  // PushTo's bookkeeping for a record that passed its checks.
  void Record(int tid, int64_t begin, int64_t end, uint64_t end_voffset);

  TabixPreset preset_;
  bool csi_;
  codec::bgzf::StoredLayout layout_;
  int min_shift_ = 14;
  int n_lvls_ = 5;
  uint32_t n_bins_;
  std::vector<std::unique_ptr<Ref>> refs_;  // by tid (order of first appearance; kBcf: header's)
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> tids_;
  // hts_idx_t's `z` state while pushing.
  int last_tid_ = -1, save_tid_ = -1;
  uint32_t last_bin_ = 0xffffffffu, save_bin_ = 0xffffffffu;
  int64_t last_coor_ = 0xffffffffu;
  uint64_t last_off_, save_off_, off_beg_, off_end_;
  uint64_t n_mapped_ = 0;
};

}  // namespace omicsfs::text
