// Every row of the op table is complete: a name, inference, and a kernel unless it is a view.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/ops/registry.h"

using namespace dyn;

TEST(Registry, EveryOpIsComplete) {
  std::set<std::string> names;
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef& d = op_def(static_cast<OpId>(i));
    SCOPED_TRACE(std::string(d.name));
    EXPECT_FALSE(d.name.empty());
    EXPECT_TRUE(names.insert(std::string(d.name)).second) << "duplicate name";
    EXPECT_NE(d.infer, nullptr);
    if (d.cls == OpClass::View)
      EXPECT_EQ(d.kernel, nullptr) << "views are metadata only";
    else
      EXPECT_NE(d.kernel, nullptr);
    EXPECT_GE(d.num_outputs, 1);
  }
}
