// fuse_elementwise: a run of elementwise kernel steps over one shape and one float dtype becomes
// one step that walks memory once. The step is a small block interpreter (in the manner of
// numexpr): for each block of block::kBlock elements it loads the run's inputs, evaluates every
// node with the same block functions the eager kernels use (core/ops/blocks.h), and stores only
// the values something after the run reads. Each element goes through the same formulas in the
// same order as in eager mode, so the results are bitwise equal; the saving is the memory
// traffic and the allocations of the intermediates.
#include <fmt/format.h>

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/passes/passes.h"
#include "core/ops/blocks.h"
#include "core/ops/loops.h"
#include "core/thread_pool.h"

namespace dyn {

struct FusedLoop {
  enum class From : uint8_t { Input, Node, Scalar };
  struct Operand {
    int index = 0;  // Input: into inputs; Node: into code; Scalar: into scalars
    From from = From::Input;
  };
  // Kept small: a long trace of small elementwise ops is one loop of as many instructions.
  struct Instr {
    int node = -1;
    int value = -1;  // the node's output
    block::UnaryFn unary = nullptr;
    block::BinaryFn binary = nullptr;
    Operand a, b;
    int output = -1;  // index into outputs when the value is read after the loop
    // An in-place node: the input whose buffer it writes (its value then lives there).
    int write_input = -1;
    // The block register that holds its value: registers are reused once a value's last reader
    // in the loop has run, so a chain needs two of them however long it is.
    int reg = -1;
  };
  DType dtype = DType::Float32;
  Dims shape;
  std::vector<SymExpr> sym_shape;  // a dynamic graph's: the loop's shape at each call
  std::vector<int> nodes;
  std::vector<int> inputs;   // value ids read (after CSE's remap)
  std::vector<int> outputs;  // value ids written
  std::vector<Instr> code;
  std::vector<Scalar> scalars;  // the distinct constants of scalar operands (by bits)
  int regs = 0;                 // value registers the code uses
  bool writes_inputs = false;   // some node writes in place into an input's buffer
};

const std::vector<int>& fused_nodes(const FusedLoop& f) { return f.nodes; }
const std::vector<int>& fused_outputs(const FusedLoop& f) { return f.outputs; }

namespace {

bool contiguous(const Value& v) { return v.strides == contiguous_strides(v.shape); }

// The same shape at every call, not only in the traced one.
bool same_shape(const Value& a, const Value& b) { return a.shape == b.shape && a.sym_shape() == b.sym_shape(); }

// Whether v is a whole buffer (made by a kernel, or a graph input), possibly after in-place writes
// into it, rather than a view of one.
bool whole_buffer(const Graph& g, int v) {
  bool via_view = false;
  root_of(g, v, &via_view);
  return !via_view;
}

bool fusable(const Graph& g, const Plan& plan, const Node& n) {
  if (n.outputs.size() != 1) return false;
  const Value& out = g.values[n.outputs[0]];
  if (n.target >= 0) {
    // In place: into a whole buffer of the loop's layout, not into a view of one.
    int t = plan.remap[n.target];
    if (!whole_buffer(g, t) || !contiguous(g.values[t]) || g.values[t].dtype != out.dtype ||
        !same_shape(g.values[t], out))
      return false;
  }
  FormulaKind k = formula_of(n.op);
  if (k == FormulaKind::unary ? !block::unary_fn(n.op, out.dtype)
                              : k != FormulaKind::binary || !block::binary_fn(n.op, out.dtype))
    return false;
  // The eager kernels cast operands to the result dtype first; a fused loop reads them as they are.
  for (int v : n.inputs)
    if (g.values[v].dtype != out.dtype) return false;
  return true;
}

struct Builder {
  const Graph& g;
  const Plan& plan;
  std::shared_ptr<FusedLoop> f = std::make_shared<FusedLoop>();
  // value -> its instruction / its input slot. Maps, not scans: a long trace of small elementwise
  // ops is one loop of as many instructions, and a scan per operand made fusing it quadratic
  // (200k ops took minutes).
  std::unordered_map<int, int> input_slot;
  // value -> its instruction, over the ids from the loop's first value on (the loop's nodes come
  // in program order, so the values they make only grow): -1 for values the loop did not make.
  int base = -1;
  std::vector<int> made;
  int made_by(int value) const {
    return base >= 0 && value >= base && value - base < static_cast<int>(made.size()) ? made[value - base] : -1;
  }
  std::unordered_set<int> written;                      // values whose buffer a node of the loop has overwritten
  std::map<std::pair<uint64_t, int>, int> scalar_slot;  // (bits, kind) -> index in scalars

  FusedLoop::Operand operand(int value) {
    value = plan.remap[value];
    if (int i = made_by(value); i >= 0) return {i, FusedLoop::From::Node};
    auto [it, added] = input_slot.try_emplace(value, static_cast<int>(f->inputs.size()));
    if (added) f->inputs.push_back(value);
    return {it->second, FusedLoop::From::Input};
  }

  FusedLoop::Operand constant(const Scalar& s) {
    uint64_t bits;  // by bits, as same_scalar compares: -0.0 is not 0.0
    if (s.kind == Scalar::Float)
      std::memcpy(&bits, &s.f, sizeof bits);
    else
      bits = static_cast<uint64_t>(s.i);
    auto [it, added] = scalar_slot.try_emplace({bits, static_cast<int>(s.kind)}, static_cast<int>(f->scalars.size()));
    if (added) f->scalars.push_back(s);
    return {it->second, FusedLoop::From::Scalar};
  }

  // Gives each value a register, reusing one once the value's last reader in the loop has run.
  // A register is freed after the instruction that reads it last has its own, so no instruction
  // writes a block it is still reading.
  void allocate_registers() {
    const int n = static_cast<int>(f->code.size());
    auto node_operands = [&](const FusedLoop::Instr& ins) {  // distinct in-loop values it reads
      std::array<int, 2> r{-1, -1};
      if (ins.a.from == FusedLoop::From::Node) r[0] = ins.a.index;
      if (ins.b.from == FusedLoop::From::Node && ins.b.index != r[0]) r[1] = ins.b.index;
      return r;
    };
    std::vector<int> last(n, -1);
    for (int i = 0; i < n; ++i)
      for (int k : node_operands(f->code[i]))
        if (k >= 0) last[k] = i;
    std::vector<int> free_regs;
    for (int i = 0; i < n; ++i) {
      FusedLoop::Instr& ins = f->code[i];
      if (ins.write_input < 0) {  // an in-place node's value lives in its input's buffer
        if (free_regs.empty()) {
          ins.reg = f->regs++;
        } else {
          ins.reg = free_regs.back();
          free_regs.pop_back();
        }
      }
      for (int k : node_operands(ins))
        if (k >= 0 && last[k] == i && f->code[k].reg >= 0) free_regs.push_back(f->code[k].reg);
      if (last[i] < 0 && ins.reg >= 0) free_regs.push_back(ins.reg);  // nothing in the loop reads it
    }
  }

  // Whether node k can join: it reads no value that the loop has overwritten, and an in-place
  // node writes into an input's buffer or continues a chain of writes into one.
  bool can_add(int k) const {
    const Node& n = g.nodes[k];
    for (int v : n.inputs)
      if (written.count(plan.remap[v])) return false;
    if (n.target < 0) return true;
    int t = plan.remap[n.target];
    if (written.count(t)) return false;
    if (int i = made_by(t); i >= 0) return f->code[i].write_input >= 0;
    return true;
  }

  void add(int k) {
    const Node& n = g.nodes[k];
    FusedLoop::Instr ins;
    ins.node = k;
    ins.value = n.outputs[0];
    f->nodes.push_back(k);
    if (n.target >= 0) {
      int t = plan.remap[n.target];
      FusedLoop::Operand target = operand(t);
      ins.write_input = target.from == FusedLoop::From::Input ? target.index : f->code[target.index].write_input;
      written.insert(t);
      f->writes_inputs = true;
    }
    if (formula_of(n.op) == FormulaKind::unary) {
      ins.unary = block::unary_fn(n.op, f->dtype);
      ins.a = operand(n.inputs[0]);
    } else {
      ins.binary = block::binary_fn(n.op, f->dtype);
      switch (n.attrs->side) {
        case ScalarSide::None:
          ins.a = operand(n.inputs[0]), ins.b = operand(n.inputs[1]);
          break;
        case ScalarSide::Rhs:
          ins.a = operand(n.inputs[0]), ins.b = constant(n.attrs->scalar);
          break;
        case ScalarSide::Lhs:
          ins.a = constant(n.attrs->scalar), ins.b = operand(n.inputs[0]);
          break;
      }
    }
    if (base < 0) base = n.outputs[0];
    made.resize(static_cast<size_t>(n.outputs[0] - base) + 1, -1);
    made[static_cast<size_t>(n.outputs[0] - base)] = static_cast<int>(f->code.size());
    f->code.push_back(ins);
  }
};

}  // namespace

int fuse_elementwise(const Graph& g, Plan* plan) {
  // Which values are read by a step, in place or as an operand, or seen by the program.
  std::vector<int> readers(g.values.size(), 0);
  for (const Step& s : plan->steps) {
    const Node& n = g.nodes[s.node];
    for (int v : n.inputs) readers[plan->remap[v]]++;
    if (n.target >= 0) readers[plan->remap[n.target]] += 2;  // never an intermediate
  }
  std::vector<bool> seen_after(g.values.size(), false);
  for (int o : g.outputs) seen_after[plan->remap[o]] = true;

  std::vector<Step> out;
  int replaced = 0;
  size_t i = 0;
  while (i < plan->steps.size()) {
    const Step& s = plan->steps[i];
    const Node& n = g.nodes[s.node];
    auto kernel_step = [&](size_t k) {
      StepKind kind = plan->steps[k].kind;
      return kind == StepKind::Kernel || kind == StepKind::InPlace;
    };
    Builder b{g, *plan};
    size_t j = i;
    if (kernel_step(i) && fusable(g, *plan, n)) {
      const Value& v = g.values[n.outputs[0]];
      b.f->dtype = v.dtype;
      b.f->shape = v.shape;
      b.f->sym_shape = v.sym_shape();
      b.add(s.node);
      while (j + 1 < plan->steps.size() && kernel_step(j + 1)) {
        int k = plan->steps[j + 1].node;
        const Value& w = g.values[g.nodes[k].outputs[0]];
        if (!fusable(g, *plan, g.nodes[k]) || w.dtype != v.dtype || !same_shape(w, v) || !b.can_add(k)) break;
        b.add(k);
        ++j;
      }
    }
    if (j == i) {
      out.push_back(std::move(plan->steps[i++]));
      continue;
    }
    // A value leaves the loop when a step after it reads it or the program sees it. (A map: a
    // vector over all the graph's values per loop is quadratic in a long trace of short loops.)
    std::vector<int> inside(b.f->code.size(), 0);  // per instruction: its readers in the loop
    for (const FusedLoop::Instr& ins : b.f->code)
      for (int v : g.nodes[ins.node].inputs)
        if (int k = b.made_by(plan->remap[v]); k >= 0) inside[static_cast<size_t>(k)]++;
    for (size_t k = 0; k < b.f->code.size(); ++k) {
      FusedLoop::Instr& ins = b.f->code[k];
      int v = g.nodes[ins.node].outputs[0];
      if (ins.write_input >= 0) continue;  // its value is in the input's buffer
      if (seen_after[v] || readers[v] > inside[k]) {
        ins.output = static_cast<int>(b.f->outputs.size());
        b.f->outputs.push_back(v);
      }
    }
    b.allocate_registers();
    replaced += static_cast<int>(j - i + 1);
    out.push_back(Step{StepKind::Fused, plan->steps[i].node, static_cast<int>(plan->loops.size()), 0});
    plan->loops.push_back(std::move(b.f));
    i = j + 1;
  }
  plan->steps = std::move(out);
  return replaced;
}

// ---- running a fused step ----

namespace {

// Reads an operand of any layout as blocks of the loop's shape: a contiguous tensor of that shape
// is read in place, anything else (broadcast, strided) is gathered.
template <typename T>
struct Reader {
  const T* base = nullptr;
  bool direct = false;
  int nd = 0;
  int64_t shape[kMaxDims], stride[kMaxDims];

  Reader(const Tensor& t, const Dims& loop_shape) {
    base = t.data<T>();
    direct = t.shape() == loop_shape && t.is_contiguous();
    Dims st = broadcast_strides(t.shape(), t.strides(), loop_shape);
    // Dims that walk this operand's memory as one (a bias broadcast over H x W, a window's
    // contiguous rows) are merged: its runs are then as long as they can be, not one row each.
    nd = 0;
    for (int d = 0; d < static_cast<int>(loop_shape.size()); ++d) {
      if (loop_shape[d] == 1 && d + 1 < static_cast<int>(loop_shape.size())) continue;  // the next one merges
      if (nd > 0 && stride[nd - 1] == st[d] * loop_shape[d]) {
        shape[nd - 1] *= loop_shape[d];
        stride[nd - 1] = st[d];
      } else {
        shape[nd] = loop_shape[d], stride[nd] = st[d];
        ++nd;
      }
    }
  }

  // The elements [begin, begin + n) in loop order, copied run by run along the innermost
  // dimension: a contiguous run is one copy, a broadcast one (stride 0) one fill.
  const T* block(int64_t begin, int64_t n, T* buf) const {
    if (direct) return base + begin;
    int64_t idx[kMaxDims], off = 0, rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      off += idx[d] * stride[d];
    }
    const int last = nd - 1;
    for (int64_t i = 0; i < n;) {
      int64_t run = nd ? std::min(shape[last] - idx[last], n - i) : n - i;
      int64_t st = nd ? stride[last] : 0;
      if (st == 1)
        std::memcpy(buf + i, base + off, static_cast<size_t>(run) * sizeof(T));
      else if (st == 0)
        std::fill_n(buf + i, run, base[off]);
      else
        for (int64_t k = 0; k < run; ++k) buf[i + k] = base[off + k * st];
      i += run;
      if (!nd) break;
      // next run: carry into the outer dimensions
      off += run * st;
      idx[last] += run;
      for (int d = last; d > 0 && idx[d] == shape[d]; --d) {
        off -= idx[d] * stride[d];
        idx[d] = 0;
        ++idx[d - 1];
        off += stride[d - 1];
      }
    }
    return buf;
  }
};

bool overlap(const Storage* a, const Storage* b) {
  if (a == b) return true;
  auto lo = [](const Storage* s) { return reinterpret_cast<uintptr_t>(s->data()); };
  return lo(a) < lo(b) + b->nbytes() && lo(b) < lo(a) + a->nbytes();
}

template <typename T>
bool run_typed(const FusedLoop& f, const Dims& shape, std::vector<Tensor>& slots, const NodePatches* patches) {
  // A plan is shared by graphs of the same structure key, which includes every node's dtype; an
  // operand of another dtype here would be read as the wrong type, so run node by node instead.
  for (int v : f.inputs)
    if (slots[v].dtype() != f.dtype) return false;
  std::vector<Reader<T>> readers;
  readers.reserve(f.inputs.size());
  for (int v : f.inputs) readers.emplace_back(slots[v], shape);
  // A buffer written in place must be laid out as the loop walks it, and no other operand may
  // share its memory (a block would read what another block already wrote): else the caller
  // runs the nodes one by one.
  if (f.writes_inputs)
    for (const FusedLoop::Instr& ins : f.code) {
      if (ins.write_input < 0) continue;
      if (!readers[ins.write_input].direct) return false;
      // Memory, not Storage objects: two storages can wrap the same bytes (dyn.from_numpy of a
      // view of another tensor's array).
      const Storage* st = slots[f.inputs[ins.write_input]].storage();
      for (size_t j = 0; j < f.inputs.size(); ++j) {
        const Storage* other = slots[f.inputs[j]].storage();
        if (static_cast<int>(j) != ins.write_input && overlap(st, other)) return false;
      }
    }
  std::vector<Tensor> outs;
  outs.reserve(f.outputs.size());
  for (size_t i = 0; i < f.outputs.size(); ++i) outs.push_back(Tensor::empty(shape, f.dtype));
  std::vector<T*> out_ptr;
  for (Tensor& t : outs) out_ptr.push_back(t.data<T>());
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  // The scalar operands' values, converted as the eager kernel converts them: the plan's distinct
  // constants, and those a call brings instead (a float constant is an input of the graph).
  auto convert = [](const Scalar& sc) {
    return sc.kind == Scalar::Float ? static_cast<T>(sc.f) : static_cast<T>(sc.i);
  };
  std::vector<T> consts;
  consts.reserve(f.scalars.size());
  for (const Scalar& sc : f.scalars) consts.push_back(convert(sc));
  std::vector<int> patched;  // per operand (2 * instruction + side): its index in consts, when patched
  if (patches && !patches->empty()) {
    std::unordered_map<uint64_t, int> seen;
    for (size_t i = 0; i < f.code.size(); ++i)
      for (int side = 0; side < 2; ++side) {
        const FusedLoop::Operand& o = side ? f.code[i].b : f.code[i].a;
        if (o.from != FusedLoop::From::Scalar) continue;
        const NodePatch* p = find_patch(patches, f.code[i].node);
        if (!p || !(p->values & 1)) continue;
        T v = convert(p->scalar[0]);
        uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof v);
        auto [it, added] = seen.try_emplace(bits, static_cast<int>(consts.size()));
        if (added) consts.push_back(v);
        if (patched.empty()) patched.assign(2 * f.code.size(), -1);
        patched[2 * i + static_cast<size_t>(side)] = it->second;
      }
  }
  // Registers: one block per input (gathered), per live value and per constant, as long as a block
  // or the whole tensor if that is shorter (a small graph's loop then touches a few cache lines).
  const int64_t bs = std::min<int64_t>(block::kBlock, std::max<int64_t>(numel, 1));
  const size_t value_regs = f.inputs.size(), const_regs = value_regs + static_cast<size_t>(f.regs);
  const size_t regs = const_regs + consts.size();
  const bool stream_outputs = !f.outputs.empty() && numel * static_cast<int64_t>(sizeof(T)) >= block::kStreamBytes;
  parallel_for(0, numel, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    std::unique_ptr<T[]> scratch(new T[regs * static_cast<size_t>(bs)]);  // uninitialized: written before read
    auto reg = [&](size_t r) { return scratch.get() + r * static_cast<size_t>(bs); };
    for (size_t k = 0; k < consts.size(); ++k) std::fill_n(reg(const_regs + k), bs, consts[k]);
    std::vector<const T*> in(f.inputs.size()), val(f.code.size());
    for (int64_t b = begin; b < end; b += bs) {
      int64_t m = std::min<int64_t>(bs, end - b);
      for (size_t i = 0; i < readers.size(); ++i) in[i] = readers[i].block(b, m, reg(i));
      for (size_t i = 0; i < f.code.size(); ++i) {
        const FusedLoop::Instr& ins = f.code[i];
        auto src = [&](const FusedLoop::Operand& o, int side) -> const T* {
          switch (o.from) {
            case FusedLoop::From::Input:
              return in[o.index];
            case FusedLoop::From::Node:
              return val[o.index];
            case FusedLoop::From::Scalar: {
              int k = patched.empty() || patched[2 * i + static_cast<size_t>(side)] < 0
                          ? o.index
                          : patched[2 * i + static_cast<size_t>(side)];
              return reg(const_regs + static_cast<size_t>(k));
            }
          }
          return nullptr;
        };
        bool stream = stream_outputs && ins.output >= 0 &&
                      reinterpret_cast<uintptr_t>(out_ptr[ins.output] + b) % 32 == 0 &&
                      (m * static_cast<int64_t>(sizeof(T))) % 32 == 0;
        T* dst = ins.write_input >= 0         ? const_cast<T*>(readers[ins.write_input].base) + b
                 : ins.output >= 0 && !stream ? out_ptr[ins.output] + b
                                              : reg(value_regs + static_cast<size_t>(ins.reg));
        if (ins.unary)
          ins.unary(src(ins.a, 0), dst, m);
        else
          ins.binary(src(ins.a, 0), src(ins.b, 1), dst, m);
        if (stream) block::stream_copy(dst, out_ptr[ins.output] + b, m * static_cast<int64_t>(sizeof(T)));
        val[i] = dst;
      }
    }
    if (stream_outputs) _mm_sfence();  // this thread's streamed blocks are visible when the step ends
  });
  for (size_t i = 0; i < f.outputs.size(); ++i) slots[f.outputs[i]] = std::move(outs[i]);
  // An in-place node's value is the buffer it wrote, as run_node gives it.
  for (const FusedLoop::Instr& ins : f.code)
    if (ins.write_input >= 0) slots[ins.value] = slots[f.inputs[ins.write_input]];
  return true;
}

}  // namespace

bool run_fused(const FusedLoop& f, std::vector<Tensor>& slots, const NodePatches* patches, const SymValues* syms) {
  Dims shape = f.shape;
  if (syms && !f.sym_shape.empty())
    for (int d = 0; d < shape.size(); ++d)
      if (int64_t x; sym_eval(f.sym_shape[d], *syms, &x)) shape[d] = x;
  return f.dtype == DType::Float64 ? run_typed<double>(f, shape, slots, patches)
                                   : run_typed<float>(f, shape, slots, patches);
}

std::string print_fused(const Graph& g, const FusedLoop& f) {
  std::string body;
  for (const FusedLoop::Instr& ins : f.code) {
    // "%3 = div(%2, 2.0)": the node as :graph prints it, without its type and source.
    std::string line = print_node(g, g.nodes[ins.node]);
    if (size_t hash = line.find("  #"); hash != std::string::npos) line.resize(hash);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    size_t eq = line.find(" = ");
    body += fmt::format("{}%{} = {}", body.empty() ? "" : "; ", g.nodes[ins.node].outputs[0],
                        eq == std::string::npos ? line : line.substr(eq + 3));
  }
  std::string outs;
  for (int v : f.outputs) outs += (outs.empty() ? "%" : ", %") + std::to_string(v);
  std::string in_place;
  for (const FusedLoop::Instr& ins : f.code)
    if (ins.write_input >= 0) in_place += (in_place.empty() ? "%" : ", %") + std::to_string(ins.value);
  if (!in_place.empty()) outs += (outs.empty() ? "" : "; ") + std::string("in place: ") + in_place;
  return fmt::format("{} -> {} (one pass over {})", body, outs, [&] {
    Value v;
    v.dtype = f.dtype, v.shape = f.shape;
    if (!f.sym_shape.empty()) v.extra().sym_shape = f.sym_shape;
    return value_meta(v);
  }());
}

}  // namespace dyn
