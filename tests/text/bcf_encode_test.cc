// BCF typed values at the edges of each integer width and descriptor size, and VCF header and
// site columns encoded as bcftools 1.16 encodes them (`bcftools view -Ou` of the same text).
#include "text/bcf_encode.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "testutil/mount_fixture.h"
#include "util/bytes.h"

namespace omicsfs::text::bcf {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::string Ints(std::vector<int32_t> v, int64_t wsize = -1) {
  std::string out;
  PutInts(&out, v.data(), v.size(), wsize);
  return out;
}

TEST(BcfTypedValues, DescriptorSizes) {
  std::string s;
  PutSize(&s, 14, kChar);
  EXPECT_EQ(s, Bytes({0xE7}));
  s.clear();
  PutSize(&s, 15, kChar);  // 15 and more: the size follows as a typed integer
  EXPECT_EQ(s, Bytes({0xF7, 0x11, 15}));
  s.clear();
  PutSize(&s, 127, kInt8);
  EXPECT_EQ(s, Bytes({0xF1, 0x11, 127}));
  s.clear();
  PutSize(&s, 128, kInt8);
  EXPECT_EQ(s, Bytes({0xF1, 0x12, 0x80, 0x00}));
  s.clear();
  PutSize(&s, 32767, kFloat);
  EXPECT_EQ(s, Bytes({0xF5, 0x12, 0xFF, 0x7F}));
  s.clear();
  PutSize(&s, 32768, kFloat);
  EXPECT_EQ(s, Bytes({0xF5, 0x13, 0x00, 0x80, 0x00, 0x00}));
  s.clear();
  PutSize(&s, 0, kNull);
  EXPECT_EQ(s, Bytes({0x00}));
}

TEST(BcfTypedValues, SmallestWidthAndItsSentinels) {
  // int8 holds [-120, 127]: below that are its sentinels.
  EXPECT_EQ(Ints({-120, 127}), Bytes({0x21, 0x88, 0x7F}));
  EXPECT_EQ(Ints({-121}), Bytes({0x12, 0x87, 0xFF}));
  EXPECT_EQ(Ints({128}), Bytes({0x12, 0x80, 0x00}));
  EXPECT_EQ(Ints({-32760, 32767}), Bytes({0x22, 0x08, 0x80, 0xFF, 0x7F}));
  EXPECT_EQ(Ints({-32761}), Bytes({0x13, 0x07, 0x80, 0xFF, 0xFF}));
  EXPECT_EQ(Ints({32768}), Bytes({0x13, 0x00, 0x80, 0x00, 0x00}));
  EXPECT_EQ(Ints({kMinInt32}), Bytes({0x13, 0x08, 0x00, 0x00, 0x80}));
  // Missing and vector-end take the chosen width's sentinels; alone they are int8's.
  EXPECT_EQ(Ints({kInt32Missing}), Bytes({0x11, 0x80}));
  EXPECT_EQ(Ints({kInt32VectorEnd}), Bytes({0x11, 0x81}));
  EXPECT_EQ(Ints({kInt32Missing, kInt32VectorEnd}), Bytes({0x21, 0x80, 0x81}));
  EXPECT_EQ(Ints({1000, kInt32Missing, kInt32VectorEnd}),
            Bytes({0x32, 0xE8, 0x03, 0x00, 0x80, 0x01, 0x80}));
  EXPECT_EQ(Ints({70000, kInt32Missing, kInt32VectorEnd}),
            Bytes({0x33, 0x70, 0x11, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x00, 0x80}));
  // No value: a null of size 0. FORMAT vectors give the per-sample width as the size.
  EXPECT_EQ(Ints({}), Bytes({0x00}));
  EXPECT_EQ(Ints({1, 2, 3, 4}, 2), Bytes({0x21, 1, 2, 3, 4}));
  EXPECT_EQ(Ints({7}, 5), Bytes({0x11, 7}));  // one value: bcf_enc_int1, size 1
}

TEST(BcfTypedValues, NumbersAsHtslibReadsThem) {
  size_t used;
  bool overflow;
  EXPECT_EQ(ParseInt("-", &used, &overflow), 0);  // a sign alone is read (hts_str2int)
  EXPECT_EQ(used, 1u);
  EXPECT_EQ(ParseInt("12ab", &used, &overflow), 12);
  EXPECT_EQ(used, 2u);
  ParseInt("99999999999999999999", &used, &overflow);
  EXPECT_TRUE(overflow);
  EXPECT_EQ(ParseFloat(".", &used), 0);
  EXPECT_EQ(used, 0u);
  // The decimal rounded to double, then to float: 0.1f's shortest text gives 0.1f back.
  EXPECT_EQ(ParseFloat("0.1", &used), 0.1f);
  EXPECT_EQ(ParseFloat("1e-05", &used), 1e-05f);
  EXPECT_EQ(used, 5u);
}

// bcftools' own bytes for a header and records with edge values: the shared part of each record
// (ID, alleles, FILTER, INFO) and its fixed fields as ParseSiteColumns encodes them.
TEST(BcfTypedValues, SiteColumnsAsBcftoolsWritesThem) {
  if (::access("/usr/bin/bcftools", X_OK) != 0) GTEST_SKIP() << "no bcftools";
  testutil::TempDir tmp;
  const std::string header =
      "##fileformat=VCFv4.3\n"
      "##FILTER=<ID=q10,Description=\"Quality below 10\">\n"
      "##INFO=<ID=DP,Number=1,Type=Integer,Description=\"Depth\">\n"
      "##INFO=<ID=AC,Number=A,Type=Integer,Description=\"Counts\">\n"
      "##INFO=<ID=AF,Number=A,Type=Float,Description=\"Frequencies\">\n"
      "##INFO=<ID=END,Number=1,Type=Integer,Description=\"End\">\n"
      "##INFO=<ID=DB,Number=0,Type=Flag,Description=\"dbSNP\">\n"
      "##INFO=<ID=AA,Number=1,Type=String,Description=\"Ancestral\">\n"
      "##FORMAT=<ID=DP,Number=1,Type=Integer,Description=\"Depth\">\n"
      "##contig=<ID=1,length=249250621>\n"
      "##contig=<ID=X>\n"
      "##source=test\n"
      "##meta=<ID=m, Description = \"spaced \" ,Other=[a,b]>\n"
      "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n";
  const std::vector<std::string> sites = {
      "1\t10\trs1\tA\tC,G\t29.5\tPASS\tDP=127;AC=-120,128;AF=0.1,1e-05;DB;AA=T",
      "1\t20\t.\tACGT\t.\t.\tq10;PASS\tDP=-121;AC=.,32768;AF=.,-0;END=100",
      "1\t30\t.\tA\tT\t0.333333\t.\tDP=2147483647;AC=-2147483640,5;END=10",
      "X\t1\tid;x\tN\t<DEL>\t1e+30\tPASS\tDP=-2147483641;AA=ab,c",
      "X\t2\t.\tG\tA\t.\t.\t.",
  };
  std::string vcf = header;
  for (const auto& s : sites) vcf += s + "\n";
  std::ofstream(tmp.path() + "/in.vcf") << vcf;
  std::string out;
  ASSERT_EQ(
      testutil::RunCommand(
          {"sh", "-c", "bcftools view --no-version -Ou " + tmp.path() + "/in.vcf " + "2>/dev/null"},
          &out),
      0);
  auto h = ParseVcfHeader(header);
  ASSERT_TRUE(h.ok()) << h.status().message();
  const std::string file_header = FileHeader(*h);
  ASSERT_GE(out.size(), file_header.size());
  EXPECT_EQ(out.substr(0, file_header.size()), file_header);
  std::string records;
  for (const auto& s : sites) {
    Record r;
    ASSERT_TRUE(ParseSiteColumns(s, h->dict, &r).ok()) << s;
    PutRecord(&records, r, "", 0, 0);
  }
  EXPECT_TRUE(out.substr(file_header.size()) == records)
      << "records: " << out.size() - file_header.size() << " vs " << records.size() << " bytes";
  // What bcftools refuses to write is an error here too.
  Record r;
  EXPECT_FALSE(ParseSiteColumns("2\t1\t.\tA\tC\t.\t.\t.", h->dict, &r).ok());
  EXPECT_FALSE(ParseSiteColumns("1\t1\t.\tA\tC\t.\tq20\t.", h->dict, &r).ok());
  EXPECT_FALSE(ParseSiteColumns("1\t1\t.\tA\tC\t.\t.\tXX=1", h->dict, &r).ok());
}

}  // namespace
}  // namespace omicsfs::text::bcf
