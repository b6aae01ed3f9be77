// The capture engine from C++: recording, the verifier, passes, structure keys, bitwise results.
#include <gtest/gtest.h>

#include <cstring>

#include "core/api/api.h"
#include "core/capture/capture.h"
#include "core/error.h"

using namespace dyn;

namespace {

std::shared_ptr<CompiledFunction> make_fn(const std::string& name, bool eager = false) {
  CompileOptions o;
  o.name = name;
  o.eager_backend = eager;
  return std::make_shared<CompiledFunction>(o);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  Tensor ca = ops::contiguous(a), cb = ops::contiguous(b);
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.numel() * itemsize(ca.dtype())) == 0;
}

Tensor program(const Tensor& x, const Tensor& w) {
  Tensor h = ops::binary(OpId::add, ops::matmul(x, w), Scalar::from_double(0.25));
  Tensor s = ops::softmax(ops::unary(OpId::tanh, h), 1, false);
  Tensor m = ops::reduce(OpId::mean, s, Dims{0}, true);
  return ops::binary(OpId::sub, ops::transpose(s, 0, 1), ops::transpose(m, 0, 1));
}

}  // namespace

TEST(Capture, LazyTensorsHaveEagerGeometryAndNoData) {
  CaptureLog::get().reset();
  Tensor x = ops::randn(Dims{3, 4}, DType::Float32);
  ASSERT_TRUE(Capture::begin(make_fn("geom")));
  Tensor t = ops::transpose(ops::binary(OpId::mul, x, Scalar::from_double(2)), 0, 1);
  EXPECT_TRUE(t.lazy());
  EXPECT_EQ(t.shape(), (Dims{4, 3}));
  EXPECT_EQ(t.strides(), (Dims{1, 4}));
  EXPECT_THROW(t.raw_data(), Error);  // reading data without a sync raises, never crashes
  Capture::end();
  EXPECT_FALSE(t.lazy());
  EXPECT_EQ(t.strides(), (Dims{1, 4}));
  // memory order is x*2's; t[0][1] = (x*2)[1][0] sits at memory index 4
  EXPECT_EQ(t.data<float>()[4], x.data<float>()[4] * 2);
  EXPECT_EQ(ops::item_double(ops::select(ops::select(t, 0, 0), 0, 1)), x.data<float>()[4] * 2.0f);
}

TEST(Capture, CompiledEqualsEagerBitwiseOnBothBackends) {
  CaptureLog::get().reset();
  Tensor x = ops::randn(Dims{5, 7}, DType::Float32), w = ops::randn(Dims{7, 3}, DType::Float32);
  Tensor eager = program(x, w);
  for (bool eager_backend : {false, true}) {
    ASSERT_TRUE(Capture::begin(make_fn(eager_backend ? "p_eager" : "p_default", eager_backend)));
    Tensor r = program(x, w);
    Capture::end();
    EXPECT_TRUE(same_bits(r, eager)) << (eager_backend ? "eager backend" : "default backend");
  }
}

TEST(Capture, NestedBeginIsRefusedSoCallsInline) {
  ASSERT_TRUE(Capture::begin(make_fn("outer")));
  EXPECT_FALSE(Capture::begin(make_fn("inner")));
  Capture::end();
  EXPECT_EQ(Capture::active(), nullptr);
}

TEST(Capture, RecordTimeErrorsAreUserErrorsAndAbortLeavesNoLazyTensor) {
  Tensor a = ops::full(Dims{2, 3}, Scalar::from_int(1), DType::Float32);
  ASSERT_TRUE(Capture::begin(make_fn("bad")));
  Tensor kept = ops::binary(OpId::add, a, Scalar::from_int(1));
  EXPECT_THROW(ops::binary(OpId::add, a, ops::full(Dims{4}, Scalar::from_int(1), DType::Float32)), Error);
  Capture::abort();
  EXPECT_EQ(Capture::active(), nullptr);
  ASSERT_FALSE(kept.lazy());
  EXPECT_EQ(kept.data<float>()[5], 2.0f);
}

namespace {
// Appends op(inputs) with attrs to g, its one output an f32[4]; returns the output's id.
int add_f32x4_node(Graph& g, OpId op, IdList inputs, const Attrs& attrs) {
  Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = AttrsRef(attrs);
  Value v;
  v.dtype = DType::Float32;
  v.shape = Dims{4};
  v.strides = Dims{1};
  v.producer = static_cast<int>(g.nodes.size());
  g.values.push_back(v);
  n.outputs = {static_cast<int>(g.values.size()) - 1};
  g.nodes.push_back(n);
  return n.outputs[0];
}
}  // namespace

TEST(Passes, DeadNodesAndCommonSubexpressionsAreRemoved) {
  Graph g;
  Tensor x = ops::full(Dims{4}, Scalar::from_int(1), DType::Float32);
  int in = g.add_input(x, InputKind::Argument, "x");
  auto add_node = [&](OpId op, IdList ins, Scalar s) {
    Attrs at;
    at.scalar = s;
    at.side = ScalarSide::Rhs;
    return add_f32x4_node(g, op, std::move(ins), at);
  };
  // Int constants: a float one is an input of the graph, read at each call (see the test below).
  int a = add_node(OpId::mul, {in}, Scalar::from_int(2));
  int b = add_node(OpId::mul, {in}, Scalar::from_int(2));  // same as a
  add_node(OpId::exp, {in}, Scalar{});                     // dead
  int c = add_node(OpId::sub, {a}, Scalar::from_int(1));
  int d = add_node(OpId::sub, {b}, Scalar::from_int(1));  // same as c once b is a
  g.outputs = {c, d};
  EXPECT_EQ(verify_graph(g), "");
  auto plan = compile_plan(g);
  // b merges into a; c and d are both outputs, so they keep their own buffers (no aliasing).
  EXPECT_EQ(plan->node_steps(), 3u);
  EXPECT_EQ(plan->remap[b], a);
  EXPECT_EQ(plan->remap[d], d);
  std::vector<Tensor> slots;
  execute(g, plan.get(), RunInputs{}, &slots);
  EXPECT_EQ(slots[d].data<float>()[0], 1.0f);
  EXPECT_NE(slots[c].storage(), slots[d].storage());
}

TEST(Passes, FloatConstantsAreGraphInputsNeverMerged) {
  // x * 2.0 twice: equal in the traced call, but a replayed call may bring two different numbers.
  Graph g;
  Tensor x = ops::full(Dims{4}, Scalar::from_int(3), DType::Float32);
  int in = g.add_input(x, InputKind::Argument, "x");
  for (int k = 0; k < 2; ++k) {
    Node n;
    n.op = OpId::mul;
    n.inputs = {in};
    n.attrs.mut().scalar = Scalar::from_double(2.0);
    n.attrs.mut().side = ScalarSide::Rhs;
    Value v;
    v.shape = Dims{4};
    v.strides = Dims{1};
    v.producer = k;
    g.values.push_back(v);
    n.outputs = {static_cast<int>(g.values.size()) - 1};
    g.nodes.push_back(n);
  }
  g.outputs = {1, 2};
  EXPECT_EQ(value_scalars(OpId::mul, g.nodes[0].attrs), 1u);
  auto plan = compile_plan(g);
  EXPECT_EQ(plan->remap[2], 2);  // not merged into %1
  // This call brings 5.0 for the second node: the plan runs with it.
  NodePatches patches(1);
  patches[0].node = 1;
  patches[0].values = 1;
  patches[0].scalar[0] = Scalar::from_double(5.0);
  std::vector<Tensor> slots;
  execute(g, plan.get(), RunInputs{nullptr, &patches}, &slots);
  EXPECT_EQ(slots[1].data<float>()[3], 6.0f);
  EXPECT_EQ(slots[2].data<float>()[3], 15.0f);
  // An int constant stays a constant: part of the structure, compared by value.
  Attrs i2;
  i2.side = ScalarSide::Rhs;
  i2.scalar = Scalar::from_int(2);
  Attrs i3 = i2;
  i3.scalar = Scalar::from_int(3);
  EXPECT_EQ(value_scalars(OpId::mul, i2), 0u);
  EXPECT_FALSE(attrs_equal_but_values(OpId::mul, i2, i3));
  Attrs f3 = i2;
  f3.scalar = Scalar::from_double(3.0);
  Attrs f4 = f3;
  f4.scalar = Scalar::from_double(-4.0);
  EXPECT_TRUE(attrs_equal_but_values(OpId::mul, f3, f4));
  EXPECT_FALSE(attrs_equal_but_values(OpId::mul, f3, i3));  // a float became an int: the dtype may change
  EXPECT_EQ(changed_values(OpId::mul, f3, f4), 1u);
}

TEST(Verifier, ReportsUseBeforeDefinition) {
  Graph g;
  Node n;
  n.op = OpId::neg;
  n.inputs = {5};
  n.outputs = {0};
  Value v;
  v.producer = 0;
  g.values.push_back(v);
  g.nodes.push_back(n);
  EXPECT_NE(verify_graph(g).find("before it is defined"), std::string::npos);
}

TEST(StructureKey, SameStructureSameKeyOtherConstantOtherKey) {
  auto trace = [](double c, int n) {
    Graph g;
    Tensor x = ops::full(Dims{n}, Scalar::from_int(1), DType::Float32);
    ops::binary(OpId::add, x, Scalar::from_double(c));
    g.add_input(x, InputKind::Argument, "x");
    Node node;
    node.op = OpId::add;
    node.inputs = {0};
    node.attrs.mut().scalar = Scalar::from_double(c);
    node.attrs.mut().side = ScalarSide::Rhs;
    return structure_key(g) + std::string(reinterpret_cast<const char*>(&node.attrs->scalar.f), 8);
  };
  EXPECT_EQ(trace(1.0, 4), trace(1.0, 4));
  EXPECT_NE(trace(1.0, 4), trace(2.0, 4));
  EXPECT_NE(trace(1.0, 4), trace(1.0, 5));
}

// ---- compact graphs (Note [compact graphs]): what a recorded node costs ----

TEST(CompactGraphs, NodesValuesAndStepsStaySmall) {
  // A 2M-op trace holds as many nodes and values: these sizes are what issue 15's bytes per node
  // are made of. Growing one of them is a decision, not an accident.
  EXPECT_LE(sizeof(Node), 72u);
  EXPECT_LE(sizeof(Value), 40u);
  EXPECT_LE(sizeof(ScalarInput), 16u);
  EXPECT_EQ(sizeof(Step), 16u);
  EXPECT_EQ(sizeof(IdList), 20u);
}

TEST(CompactGraphs, IdListKeepsItsIdsAcrossInlineAndHeap) {
  IdList a;
  std::vector<int> want;
  for (int i = 0; i < 40; ++i) {
    a.push_back(i * 7 - 3);
    want.push_back(i * 7 - 3);
    ASSERT_EQ(a.size(), want.size());
    ASSERT_TRUE(std::equal(a.begin(), a.end(), want.begin())) << "after " << i + 1 << " ids";
    IdList copy = a;  // a copy owns its own ids
    ASSERT_TRUE(copy == a);
    copy[0] = 1000;
    ASSERT_EQ(a[0], -3);
    IdList moved = std::move(copy);
    ASSERT_EQ(moved.size(), a.size());
    ASSERT_EQ(moved[0], 1000);
    ASSERT_EQ(moved.back(), want.size() == 1 ? 1000 : want.back());
  }
  IdList small{1, 2}, big = a;
  big = small;  // from the heap back to inline
  EXPECT_TRUE(big == small);
  small = a;
  EXPECT_TRUE(small == a);
}

TEST(CompactGraphs, OutputsAreConsecutiveValues) {
  OutputIds o;
  o.push_back(5);
  o.push_back(6);
  EXPECT_EQ(o.size(), 2u);
  EXPECT_EQ(o[1], 6);
  std::vector<int> seen(o.begin(), o.end());
  EXPECT_EQ(seen, (std::vector<int>{5, 6}));
  EXPECT_THROW(o.push_back(9), std::logic_error);
}

TEST(CompactGraphs, ShapesStacksAndAttributesAreShared) {
  DimsRef a = Dims{4, 8}, b = Dims{4, 8}, c = Dims{8, 4};
  EXPECT_TRUE(a == b);
  EXPECT_EQ(&a.get(), &b.get());  // one copy for the process
  EXPECT_FALSE(a == c);
  EXPECT_EQ(numel_of(a), 32);

  static const std::string file = "f.py", fn = "g";
  std::vector<SourceLoc> frames{SourceLoc{&file, &fn, 3}};
  SourceStack s1(frames), s2(frames), none;
  EXPECT_EQ(&s1.frames(), &s2.frames());
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.top().known());
  EXPECT_EQ(s1.top().line, 3);

  // A node's own change to shared attributes copies them first.
  Node n1, n2;
  n1.attrs = Attrs{};
  n2.attrs = n1.attrs;
  n2.attrs.mut().dim = 3;
  EXPECT_EQ(n1.attrs->dim, 0);
  EXPECT_EQ(n2.attrs->dim, 3);
}

TEST(CompactGraphs, RecordingSharesEqualAttributes) {
  auto fn = make_fn("share_attrs");
  Tensor x = ops::full(Dims{8}, Scalar::from_double(1.0), DType::Float32);
  Capture::begin(fn);
  Tensor y = x;
  for (int i = 0; i < 50; ++i) y = ops::binary(OpId::mul, y, Scalar::from_double(i % 2 ? 2.0 : 0.5));
  GraphRecord rec;  // a copy of the trace so far: copies share what the trace shares
  ASSERT_TRUE(Capture::active()->graph_in_progress(&rec));
  const Graph& g = *rec.graph;
  ASSERT_EQ(g.nodes.size(), 50u);
  EXPECT_EQ(&g.nodes[0].attrs.get(), &g.nodes[2].attrs.get());  // the same constant: one copy
  EXPECT_NE(&g.nodes[0].attrs.get(), &g.nodes[1].attrs.get());
  EXPECT_EQ(&g.values[g.nodes[0].outputs[0]].shape.get(), &g.values[g.nodes[49].outputs[0]].shape.get());
  Capture::end();
  EXPECT_TRUE(y.defined());
}

TEST(CompactGraphs, PlansLiveAsLongAsAGraphUsesThem) {
  // The plan cache shares a plan between graphs of one structure while one of them holds it, and
  // keeps nothing once none does: memory follows the cached graphs, not every structure ever seen.
  Graph g;
  Tensor x = ops::full(Dims{4}, Scalar::from_int(1), DType::Float32);
  int in = g.add_input(x, InputKind::Argument, "x");
  Node n;
  n.op = OpId::neg;
  n.inputs = {in};
  Value v;
  v.shape = Dims{4};
  v.strides = Dims{1};
  v.producer = 0;
  g.values.push_back(v);
  n.outputs = {1};
  g.nodes.push_back(n);
  g.outputs = {1};
  const std::string key = structure_key(g) + "|test-plan-lifetime";
  bool compiled = false;
  std::shared_ptr<Plan> held = cached_plan(key, g, &compiled);
  EXPECT_TRUE(compiled);
  EXPECT_EQ(cached_plan(key, g, &compiled), held);
  EXPECT_FALSE(compiled);  // shared while held
  std::weak_ptr<Plan> was = held;
  held.reset();
  EXPECT_TRUE(was.expired());  // the cache did not keep it
  std::shared_ptr<Plan> again = cached_plan(key, g, &compiled);
  EXPECT_TRUE(compiled);
}

TEST(CompactGraphs, ChunkedStorageIndexesCopiesAndNeverMoves) {
  Chunked<std::string> c;
  std::vector<const std::string*> where;
  for (int i = 0; i < 1000; ++i) {  // across the growing chunks (16, 32, 64, 128) and fixed ones
    c.push_back("v" + std::to_string(i));
    where.push_back(&c.back());
  }
  ASSERT_EQ(c.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(c[static_cast<size_t>(i)], "v" + std::to_string(i));
    ASSERT_EQ(&c[static_cast<size_t>(i)], where[static_cast<size_t>(i)]) << "element " << i << " moved";
  }
  int k = 0;
  for (const std::string& s : c) ASSERT_EQ(s, "v" + std::to_string(k++));
  EXPECT_EQ(k, 1000);
  Chunked<std::string> copy = c, prefix;
  prefix.assign(c.begin(), c.begin() + 300);
  EXPECT_EQ(copy[999], "v999");
  EXPECT_EQ(prefix.size(), 300u);
  EXPECT_EQ(prefix.back(), "v299");
  EXPECT_EQ(c.end() - c.begin(), 1000);
  Chunked<std::string> moved = std::move(copy);
  EXPECT_EQ(moved[500], "v500");
  EXPECT_TRUE(copy.empty());  // NOLINT: a moved-from container is empty and usable
  copy.push_back("again");
  EXPECT_EQ(copy[0], "again");
  c.clear();
  EXPECT_TRUE(c.empty());
  c.push_back("x");
  EXPECT_EQ(c.front(), "x");
}

namespace {
// x -> a = x * 2 -> c = cast(a, float32) (a copy), optionally also w = view(a) as an output.
struct CopyGraph {
  Graph g;
  int a = -1, c = -1, w = -1;
  explicit CopyGraph(bool view_out, bool copy = true) {
    Tensor x = ops::full(Dims{4}, Scalar::from_int(3), DType::Float32);
    int in = g.add_input(x, InputKind::Argument, "x");
    auto add = [&](OpId op, int from, const Attrs& at) { return add_f32x4_node(g, op, {from}, at); };
    Attrs mul;
    mul.scalar = Scalar::from_int(2);
    mul.side = ScalarSide::Rhs;
    a = add(OpId::mul, in, mul);
    g.outputs = {a};
    if (!copy) return;
    Attrs cast;
    cast.dtype = DType::Float32;
    c = add(OpId::cast, a, cast);
    g.outputs = {c};
    if (view_out) {
      Attrs view;
      view.dims = Dims{4};
      w = add(OpId::view, a, view);
      g.outputs.push_back(w);
    }
  }
};
// How many buffers running g allocates: the fewest allocations it can be given without one failing.
int allocations(const Graph& g, const Plan& plan) {
  for (int n = 0; n < 16; ++n) {
    fail_allocation_after(n);
    std::vector<Tensor> slots;
    try {
      execute(g, &plan, RunInputs{}, &slots);
      fail_allocation_after(-1);
      return n;
    } catch (const std::bad_alloc&) {
    }
  }
  fail_allocation_after(-1);
  return -1;
}
}  // namespace

TEST(Passes, ACopyOfAValueThatDiesTakesItsBuffer) {
  CopyGraph cg(false);
  EXPECT_EQ(verify_graph(cg.g), "");
  auto plan = compile_plan(cg.g);
  EXPECT_NE(print_plan(cg.g, *plan).find("move      %2 : f32[4] = cast(%1"), std::string::npos)
      << print_plan(cg.g, *plan);
  // The copy allocates nothing: the graph allocates what the product alone does.
  CopyGraph product(false, false);
  auto product_plan = compile_plan(product.g);
  int alone = allocations(product.g, *product_plan);
  ASSERT_GE(alone, 1);
  EXPECT_EQ(allocations(cg.g, *plan), alone);
  std::vector<Tensor> slots;
  execute(cg.g, plan.get(), RunInputs{}, &slots);
  ASSERT_TRUE(slots[cg.c].defined());
  EXPECT_EQ(slots[cg.c].data<float>()[3], 6.0f);
}

TEST(Passes, ACopyOfABufferAViewStillHoldsIsACopy) {
  CopyGraph cg(true);
  EXPECT_EQ(verify_graph(cg.g), "");
  auto plan = compile_plan(cg.g);
  std::vector<Tensor> slots;
  execute(cg.g, plan.get(), RunInputs{}, &slots);
  ASSERT_TRUE(slots[cg.c].defined() && slots[cg.w].defined());
  EXPECT_NE(slots[cg.c].storage(), slots[cg.w].storage());  // the view's memory is not the copy's
  EXPECT_EQ(slots[cg.c].data<float>()[0], 6.0f);
  EXPECT_EQ(slots[cg.w].data<float>()[0], 6.0f);
  CopyGraph product(false, false);
  EXPECT_EQ(allocations(cg.g, *plan), allocations(product.g, *compile_plan(product.g)) + 1);  // the copy's
}
