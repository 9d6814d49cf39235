// File: planner/spmd/sharding.cpp
// The rules, per operator kind (activations are [batch, seq, features]; attention scores
// [batch, heads, seq, seq]):
//   linear, lm_head  data (batch split, replicated weight, gradient sync), column (replicated
//                    input, weight split on outputs -> output split on features; backward
//                    all-reduces the input gradient), row (input split on features, weight split
//                    on inputs -> partial sums), replicated
//   attention        data (batch split), heads (features split = heads split), replicated
//   norms, softmax,  follow their input: batch split, heads split (softmax) or replicated;
//   activation       activations also split on features
//   residual         both inputs in the same layout (partial sums add too)
//   embedding        data (batch split, replicated table), hidden (table split on features)
//   loss             batch-split logits -> partial-sum loss; replicated -> replicated
//   conv2d           data (batch split, gradient sync), channels (output channels split); pooling
//                    follows its input; MoE: dispatch sends each device's tokens to a slice of
//                    every expert's capacity, experts run expert-parallel (all-to-all in, out) or
//                    data-parallel on the capacity, combine returns tokens to their batch split
#include "planner/spmd/sharding.hpp"

#include "base/text.hpp"

namespace hetsim {

std::string layout_name(const Layout& l) {
  switch (l.kind) {
    case LayoutKind::kReplicated: return "R";
    case LayoutKind::kPartial: return "P";
    case LayoutKind::kSplit: return indexed_name("S", static_cast<size_t>(l.dim));
  }
  return "?";
}

std::string_view comm_name(Comm c) {
  switch (c) {
    case Comm::kNone: return "none";
    case Comm::kAllGather: return "all-gather";
    case Comm::kReduceScatter: return "reduce-scatter";
    case Comm::kAllReduce: return "all-reduce";
    case Comm::kAllToAll: return "all-to-all";
  }
  return "?";
}

namespace {

Rule rule(std::string name, std::vector<Layout> in, Layout out, bool sharded, ParamPlacement params = ParamPlacement::kNone,
          bool grad_sync = false, Comm bwd = Comm::kNone) {
  return Rule{std::move(name), std::move(in), out, sharded, params, grad_sync, bwd};
}

}  // namespace

std::vector<Rule> rules_for(const Op& op) {
  const size_t n_in = op.inputs.size();
  const int last = static_cast<int>(op.shape.size()) - 1;
  const bool has_params = op.params > 0;
  const ParamPlacement rep = has_params ? ParamPlacement::kReplicated : ParamPlacement::kNone;
  auto same = [&](Layout l) { return std::vector<Layout>(n_in, l); };
  std::vector<Rule> out;
  switch (op.kind) {
    case OpKind::kLinear:
    case OpKind::kLmHead:
      out.push_back(rule("data", same(split(0)), split(0), true, rep, has_params));
      out.push_back(rule("column", same(replicated()), split(last), true, ParamPlacement::kSharded, false, Comm::kAllReduce));
      if (op.kind == OpKind::kLinear) out.push_back(rule("row", same(split(last)), partial(), true, ParamPlacement::kSharded));
      break;
    case OpKind::kAttnScores:
      out.push_back(rule("data", same(split(0)), split(0), true));
      out.push_back(rule("heads", same(split(2)), split(1), true));  // [b,s,3h] split on features = heads
      break;
    case OpKind::kSoftmax:
      out.push_back(rule("data", same(split(0)), split(0), true));
      out.push_back(rule("heads", same(split(1)), split(1), true));
      break;
    case OpKind::kAttnContext:
      out.push_back(rule("data", same(split(0)), split(0), true));
      out.push_back(rule("heads", same(split(1)), split(2), true));
      break;
    case OpKind::kFlashAttention:  // [b,s,3h] -> [b,s,h], by batch or by heads (features)
      out.push_back(rule("data", same(split(0)), split(0), true));
      out.push_back(rule("heads", same(split(2)), split(2), true));
      break;
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
      out.push_back(rule("data", same(split(0)), split(0), true, rep, has_params));
      break;
    case OpKind::kActivation:  // elementwise: any split passes through
    case OpKind::kDropout:
      out.push_back(rule("data", same(split(0)), split(0), true));
      for (int d = 1; d <= last; ++d) out.push_back(rule(d == last ? "features" : "split" + std::to_string(d), same(split(d)), split(d), true));
      break;
    case OpKind::kResidual:
      out.push_back(rule("data", same(split(0)), split(0), true));
      out.push_back(rule("features", same(split(last)), split(last), true));
      out.push_back(rule("partial", same(partial()), partial(), true));
      break;
    case OpKind::kEmbedding:
      out.push_back(rule("data", same(replicated()), split(0), true, rep, has_params));  // (token ids: no op's output)
      out.push_back(rule("hidden", same(replicated()), split(last), true, ParamPlacement::kSharded));
      break;
    case OpKind::kLoss:
      out.push_back(rule("data", same(split(0)), partial(), true));
      break;
    case OpKind::kConv2d:  // [b, c, h, w]: batch split, or output channels split (input replicated)
      out.push_back(rule("data", same(split(0)), split(0), true, rep, has_params));
      out.push_back(rule("channels", same(replicated()), split(1), true, ParamPlacement::kSharded, false, Comm::kAllReduce));
      break;
    case OpKind::kPool:
      out.push_back(rule("data", same(split(0)), split(0), true));
      out.push_back(rule("channels", same(split(1)), split(1), true));
      break;
    case OpKind::kMoeDispatch:  // each device routes its tokens: a slice of every expert's capacity
      out.push_back(rule("data", same(split(0)), split(1), true));
      break;
    case OpKind::kMoeExpert:  // experts spread over devices (expert parallel), or capacity split (data)
      out.push_back(rule("expert", same(split(0)), split(0), true, ParamPlacement::kSharded));
      out.push_back(rule("data", same(split(1)), split(1), true, rep, has_params));
      break;
    case OpKind::kMoeCombine:
      out.push_back(rule("data", same(split(1)), split(0), true));
      break;
    case OpKind::kSsmScan:  // [b,s,in_proj] -> [b,s,inner]: by batch, or by SSM heads (features; the conv weights with them)
      out.push_back(rule("data", same(split(0)), split(0), true, rep, has_params));
      out.push_back(rule("heads", same(split(last)), split(last), true, ParamPlacement::kSharded));
      break;
  }
  // ZeRO-3 variant of every data-parallel rule with parameters: same compute, sharded storage.
  const size_t rules = out.size();
  for (size_t i = 0; i < rules; ++i) {
    if (out[i].name == "data" && out[i].gradient_sync) {
      Rule z = out[i];
      z.name = "zero";
      z.params = ParamPlacement::kGathered;
      z.gradient_sync = false;
      out.push_back(z);
    }
  }
  out.push_back(rule("replicated", same(replicated()), replicated(), false, rep));
  return out;
}

Conversion convert(const Layout& from, const Layout& to) {
  if (from == to) return {};
  if (to.kind == LayoutKind::kPartial) return {false};
  switch (from.kind) {
    case LayoutKind::kReplicated:  // a local slice; its gradient pieces are gathered back
      return {true, Comm::kNone, Comm::kAllGather};
    case LayoutKind::kPartial:
      if (to.kind == LayoutKind::kReplicated) return {true, Comm::kAllReduce, Comm::kNone};
      return {true, Comm::kReduceScatter, Comm::kAllGather};
    case LayoutKind::kSplit:
      if (to.kind == LayoutKind::kReplicated) return {true, Comm::kAllGather, Comm::kReduceScatter};
      return {true, Comm::kAllToAll, Comm::kAllToAll};
  }
  return {false};
}

}  // namespace hetsim
