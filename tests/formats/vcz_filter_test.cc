// Record filters of VCF Zarr stores (formats/vcz/filter.h, expr.h) on the corpus' sample.vcz:
// bcftools' variant types, the parsers' refusals, each named by the part at fault, and
// expressions evaluated over the store to the rows bcftools 1.16 keeps (checked by hand against
// `bcftools view -H -i EXPR` of the mounted sample.vcf; the mount tests run bcftools itself).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/vcz/expr.h"
#include "formats/vcz/filter.h"
#include "formats/vcz/store.h"

namespace omicsfs::formats::vcz {
namespace {

const std::string kSample = OMICSFS_CORPUS_DIR "/vcf-zarr/sample/sample.vcz";

int Types(std::vector<std::string> alleles) {
  std::vector<const std::string*> p;
  for (const auto& a : alleles) p.push_back(&a);
  return VariantTypes(p);
}

TEST(VariantTypes, AreHtslibsClasses) {
  EXPECT_EQ(Types({"A", "C"}), 1);        // SNP
  EXPECT_EQ(Types({"AC", "GT"}), 2);      // MNP
  EXPECT_EQ(Types({"A", "AT"}), 4);       // insertion
  EXPECT_EQ(Types({"AT", "A"}), 4);       // deletion
  EXPECT_EQ(Types({"A", "<DEL>"}), 8);    // symbolic: other
  EXPECT_EQ(Types({"A", "<*>"}), 0);      // gVCF's reference block
  EXPECT_EQ(Types({"A", "*"}), 32);       // overlapping deletion
  EXPECT_EQ(Types({"A", "A[1:5["}), 16);  // breakend
  EXPECT_EQ(Types({"A", "C", "AT"}), 5);  // SNP and indel
  EXPECT_EQ(Types({"A"}), 0);             // no ALT
  EXPECT_EQ(Types({"ACG", "TCA"}), 2);    // same length: MNP
  EXPECT_EQ(Types({"ac", "AT"}), 1);      // case-insensitive matching
}

class Filters : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = Store::Open(kSample);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = new std::shared_ptr<const Store>(*s);
  }
  static void TearDownTestSuite() {
    delete store_;
    store_ = nullptr;
  }
  static const Store& S() { return **store_; }
  // The positions (POS) of the rows `test` keeps.
  static std::string Kept(const RecordTest& test) {
    auto runs = MatchingRows(S(), {&test}, "sample.vcz");
    EXPECT_TRUE(runs.ok()) << runs.status().message();
    if (!runs.ok()) return "";
    auto b = S().ReadParts(0, S().num_variants(), Store::kPosition);
    EXPECT_TRUE(b.ok());
    std::string out;
    for (const auto& [begin, end] : *runs)
      for (uint64_t r = begin; r < end; ++r) {
        if (!out.empty()) out += ' ';
        out += std::to_string(zarr::IntAt(b->position, r));
      }
    return out;
  }
  static std::string Kept(const std::string& expr, bool exclude = false) {
    auto t = ParseExpression(expr, exclude, S());
    EXPECT_TRUE(t.ok()) << expr << ": " << t.status().message();
    return t.ok() ? Kept(**t) : "";
  }
  static std::string Refusal(const std::string& expr) {
    auto t = ParseExpression(expr, false, S());
    if (!t.ok()) return t.status().message();
    auto runs = MatchingRows(S(), {t->get()}, "sample.vcz");
    return runs.ok() ? "accepted" : runs.status().message();
  }
  static inline std::shared_ptr<const Store>* store_ = nullptr;
};

TEST_F(Filters, SimpleSelectors) {
  EXPECT_EQ(Kept(**ParseTypes("indels", false)), "1234567 10");
  EXPECT_EQ(Kept(**ParseTypes("snps", true)), "1230237 1234567 1235237 10");
  EXPECT_EQ(Kept(**ParseAlleles("3-")), "1110696 1234567 10");
  EXPECT_EQ(Kept(**ParseAlleles("1")), "1230237 1235237");
  EXPECT_EQ(Kept(**ParseFilterNames("q10,.", S())), "111 112 17330 1235237");
  EXPECT_FALSE(ParseTypes("snp", false).ok());
  EXPECT_FALSE(ParseAlleles("2-1").ok());
  EXPECT_FALSE(ParseAlleleFrequency("0.1:rare", true).ok());
  EXPECT_FALSE(ParseAlleleFrequency("0.1x", true).ok());
}

TEST_F(Filters, ExpressionsKeepWhatBcftoolsKeeps) {
  EXPECT_EQ(Kept("INFO/DP!=14"), "111 112 17330 1110696 1230237 1234567 1235237 10");
  EXPECT_EQ(Kept("INFO/DP=\".\""), "111 112 1235237 10");
  EXPECT_EQ(Kept("FMT/DP>5 & FMT/GQ>40"), "14370");
  EXPECT_EQ(Kept("GT=\"mis\""), "1234567 1235237");
  EXPECT_EQ(Kept("GT=\"hap\""), "10");
  EXPECT_EQ(Kept("TYPE=\"ref\""), "1230237 1235237");
  EXPECT_EQ(Kept("FILTER=\".\""), "111 112 1235237");
  EXPECT_EQ(Kept("abs(POS-17000)<1000"), "17330");
  EXPECT_EQ(Kept("strlen(REF)>1"), "10");
  EXPECT_EQ(Kept("AF[1]>0.4"), "14370 1110696");  // one value: bcftools takes it for any index
  EXPECT_EQ(Kept("QUAL*2>50 && QUAL<=50"), "14370 1230237 1234567");
  EXPECT_EQ(Kept("GT=\"mis\"", /*exclude=*/true), "111 112 14370 17330 1110696 1230237 10");
}

TEST_F(Filters, ExpressionsRefusedNameThePart) {
  EXPECT_NE(Refusal("QUAL>").find("ends too early"), std::string::npos);
  EXPECT_NE(Refusal("!(QUAL>1)").find("'!'"), std::string::npos);
  EXPECT_NE(Refusal("DP>1").find("ambiguous"), std::string::npos);
  EXPECT_NE(Refusal("INFO/XX>1").find("\"XX\""), std::string::npos);
  EXPECT_NE(Refusal("REF>1").find("a string compared with a number"), std::string::npos);
  EXPECT_NE(Refusal("median(FMT/GQ)>1").find("median()"), std::string::npos);
  EXPECT_NE(Refusal("ID~\"rs\"").find("ID"), std::string::npos);
  EXPECT_NE(Refusal("QUAL%2>0").find("modulo"), std::string::npos);
  EXPECT_NE(Refusal("FMT/GQ[0]>1").find("[0]"), std::string::npos);
  EXPECT_NE(Refusal("QUAL+1").find("not a condition"), std::string::npos);
  EXPECT_NE(Refusal("GT=\"0/1\"").find("0/1"), std::string::npos);
  EXPECT_NE(Refusal("FILTER=\"nope\"").find("nope"), std::string::npos);
}

}  // namespace
}  // namespace omicsfs::formats::vcz
