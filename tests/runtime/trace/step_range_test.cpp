#include "runtime/trace/step_range.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace zt::trace {
namespace {

TEST(StepRange, ParsesAnInclusiveRange) {
  StepRange range = parse_step_range("3:5");
  EXPECT_EQ(range.first, 3);
  EXPECT_EQ(range.last, 5);
  EXPECT_FALSE(range.contains(2));
  EXPECT_TRUE(range.contains(3));
  EXPECT_TRUE(range.contains(5));
  EXPECT_FALSE(range.contains(6));
  EXPECT_EQ(range.str(), "3:5");
}

TEST(StepRange, ParsesASingleStep) {
  StepRange range = parse_step_range("4");
  EXPECT_EQ(range.first, 4);
  EXPECT_EQ(range.last, 4);
  EXPECT_EQ(range.str(), "4");
  EXPECT_FALSE(range.empty());
}

TEST(StepRange, RejectsWhatIsNotARangeOfSteps) {
  for (const char* text : {"", "0", "-1", "5:3", "a", "3:", ":5", "3:5:7", "3-5", " 3", "4x"})
    EXPECT_THROW(parse_step_range(text), UserError) << "'" << text << "'";
  try {
    parse_step_range("5:3");
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("after the last"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zt::trace
