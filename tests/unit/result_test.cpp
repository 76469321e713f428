// Result: a failed result's value() carries the error's own text, not a
// bare std::bad_variant_access with no message.
#include "latlab/result.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace latlab {
namespace {

constexpr char kWhy[] = "VulkanAttachDesc::instance, physical_device and device are required";

Result<std::unique_ptr<int>> failing() { return make_error(kWhy); }

TEST(Result, ValueOfAnErrorThrowsItsMessage) {
  Result<std::unique_ptr<int>> r = failing();
  try {
    (void)r.value();
    FAIL() << "value() of an error returned";
  } catch (const BadResultAccess& e) {
    EXPECT_STREQ(e.what(), kWhy);
  }
  EXPECT_THROW((void)*r, BadResultAccess);
  EXPECT_THROW((void)r->get(), BadResultAccess);
  EXPECT_THROW((void)failing().value(), BadResultAccess);
  const Result<void> v = make_error(kWhy);
  try {
    v.value();
    FAIL() << "value() of an error returned";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), kWhy);
  }
}

// GCC 12 at -O2 warns that the inlined variant destructor may read the
// Error alternative's string of a Result that holds an int: a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
TEST(Result, ErrorOfAValueThrows) {
  const Result<int> r = 3;
  EXPECT_EQ(r.value(), 3);
  EXPECT_THROW((void)r.error(), BadResultAccess);
  const Result<void> v;
  EXPECT_NO_THROW(v.value());
  EXPECT_THROW((void)v.error(), BadResultAccess);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// The docs' pattern, `auto x = create(...).value();`, uncaught: the program
// dies showing the error's text (std::terminate prints what()).
void uncaught() noexcept { (void)failing().value(); }

TEST(ResultDeathTest, UncaughtValueOfAnErrorDiesWithItsMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(uncaught(), "instance, physical_device and device are required");
}

}  // namespace
}  // namespace latlab
