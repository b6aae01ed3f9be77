// DOT export parses back in graphviz, renders as SVG and PNG, and refuses graphs too large to lay out.
#include <gtest/gtest.h>

#include "core/capture/capture.h"
#include "core/error.h"
#include "core/api/api.h"
#include "viz/dot.h"
#include "viz/render.h"

using namespace dyn;

namespace {

// Records a chain of n ops through the real capture path and returns the graph id.
std::string capture_chain(const std::string& name, int n) {
  CompileOptions o;
  o.name = name;
  auto fn = CompiledFunction::create(o);
  Tensor x = ops::full(Dims{4}, Scalar::from_int(1), DType::Float32);
  EXPECT_TRUE(Capture::begin(fn));
  Tensor y = x;
  for (int i = 0; i < n; ++i) y = ops::binary(OpId::mul, y, Scalar::from_double(1.5));
  Capture::end();
  return name + "[0].0";
}

}  // namespace

TEST(Dot, EscapesAnythingAndParsesBack) {
  for (std::string nasty : {std::string("say \"hi\""), std::string("back\\slash"), std::string("new\nline"),
                            std::string("{braces} [brackets] <angle> ;|&"), std::string("tab\there")}) {
    std::string dot =
        "digraph g { a [label=\"" + viz::dot_escape(nasty) + "\", tooltip=\"" + viz::dot_escape(nasty) + "\"]; }";
    EXPECT_EQ(viz::check_dot(dot), "") << nasty;
  }
}

TEST(Dot, CapturedGraphsParseAndRender) {
  CaptureLog::get().reset();
  std::string id = capture_chain("dotchain", 5);
  std::string dot = viz::dot_text(id);
  EXPECT_EQ(viz::check_dot(dot), "");
  EXPECT_NE(dot.find("mul 1.5"), std::string::npos);
  std::string svg = viz::render(dot, "svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  std::string png = viz::render(dot, "png");
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  EXPECT_EQ(viz::dot_text(id), dot) << "DOT must be stable";
  EXPECT_EQ(viz::check_dot(viz::dot_diff_text(id, id)), "");
}

TEST(Dot, LargeGraphsExportButRefuseToRender) {
  CaptureLog::get().reset();
  std::string id = capture_chain("bigchain", 10000);
  std::string dot = viz::dot_text(id);
  EXPECT_EQ(viz::check_dot(dot), "");
  try {
    viz::render(dot, "svg");
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("limited to"), std::string::npos) << e.what();
  }
}

TEST(Dot, UnknownTargetsAndFormatsAreUserErrors) {
  EXPECT_THROW(viz::dot_text("no_such_fn"), Error);
  EXPECT_THROW(viz::render("digraph { a }", "gif"), Error);
  EXPECT_THROW(viz::render("digraph { a -> }", "svg"), Error);
}
