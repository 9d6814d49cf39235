// File: sim/program_codec.cpp
#include "sim/program_codec.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace hetsim {
namespace {

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void size(size_t n) { pod(static_cast<uint64_t>(n)); }
  template <class T>
  void pods(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    size(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void text(const std::string& s) {
    size(s.size());
    out_.append(s);
  }

 private:
  std::string& out_;
};

class Reader {
 public:
  explicit Reader(std::string_view& in) : in_(in) {}
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  size_t size() { return static_cast<size_t>(pod<uint64_t>()); }
  template <class T>
  std::vector<T> pods() {
    const size_t n = size();
    if (n > left() / sizeof(T)) fail();
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::string text() {
    const size_t n = size();
    return std::string(take(n), n);
  }
  [[nodiscard]] size_t left() const { return in_.size(); }
  [[noreturn]] static void fail() { throw std::runtime_error("encoded program is cut short or corrupt"); }

 private:
  const char* take(size_t n) {
    if (n > in_.size()) fail();
    const char* p = in_.data();
    in_.remove_prefix(n);
    return p;
  }
  std::string_view& in_;
};

enum class Tag : uint8_t { kCompute, kCollective, kSend };

void encode_task(Writer& w, const Task& t) {
  w.text(t.label);
  w.pods(t.deps);
  if (const auto* c = std::get_if<ComputeTask>(&t.body)) {
    w.pod(Tag::kCompute);
    w.pod(c->device);
    w.pod(c->duration_s);
    w.pod(c->flops);
    w.pod(c->memory_delta_bytes);
    w.pods(c->mirrors);
    w.pod(c->copies);
  } else if (const auto* g = std::get_if<CollectiveTask>(&t.body)) {
    w.pod(Tag::kCollective);
    w.pod(g->op);
    w.pods(g->group);
    w.pod(g->size_bytes);
    w.pod(g->algorithm);
    w.pod(g->root);
    w.pods(g->shard_bytes);
    w.pod(g->stream);
    w.size(g->mirror_groups.size());
    for (const std::vector<int>& m : g->mirror_groups) w.pods(m);
  } else {
    const auto& s = std::get<SendTask>(t.body);
    w.pod(Tag::kSend);
    w.pod(s.src);
    w.pod(s.dst);
    w.pod(s.size_bytes);
    w.pod(s.stream);
    w.size(s.mirrors.size());
    for (const auto& [from, to] : s.mirrors) {
      w.pod(from);
      w.pod(to);
    }
    w.pod(s.copies);
  }
}

Task decode_task(Reader& r) {
  Task t;
  t.label = r.text();
  t.deps = r.pods<int>();
  switch (r.pod<Tag>()) {
    case Tag::kCompute: {
      ComputeTask c;
      c.device = r.pod<int>();
      c.duration_s = r.pod<double>();
      c.flops = r.pod<double>();
      c.memory_delta_bytes = r.pod<double>();
      c.mirrors = r.pods<int>();
      c.copies = r.pod<int>();
      t.body = std::move(c);
      break;
    }
    case Tag::kCollective: {
      CollectiveTask g;
      g.op = r.pod<CollectiveOp>();
      g.group = r.pods<int>();
      g.size_bytes = r.pod<double>();
      g.algorithm = r.pod<Algorithm>();
      g.root = r.pod<int>();
      g.shard_bytes = r.pods<double>();
      g.stream = r.pod<CommStream>();
      const size_t groups = r.size();
      if (groups > r.left() / sizeof(uint64_t)) Reader::fail();  // each group at least its length
      g.mirror_groups.resize(groups);
      for (std::vector<int>& m : g.mirror_groups) m = r.pods<int>();
      t.body = std::move(g);
      break;
    }
    case Tag::kSend: {
      SendTask s;
      s.src = r.pod<int>();
      s.dst = r.pod<int>();
      s.size_bytes = r.pod<double>();
      s.stream = r.pod<CommStream>();
      const size_t n = r.size();
      if (n > r.left() / (2 * sizeof(int))) Reader::fail();
      s.mirrors.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const int from = r.pod<int>();
        s.mirrors.emplace_back(from, r.pod<int>());
      }
      s.copies = r.pod<int>();
      t.body = std::move(s);
      break;
    }
    default:
      Reader::fail();
  }
  return t;
}

}  // namespace

void encode_program(const Program& p, std::string& out) {
  Writer w(out);
  w.text(p.strategy);
  w.pods(p.devices);
  w.pod(p.samples);
  w.pod(p.tokens);
  w.pod(p.model_flops);
  w.pod(p.compute_source_s);
  w.pod(p.repeated_step.has_value());
  if (p.repeated_step) w.pod(*p.repeated_step);
  w.size(p.tasks.size());
  for (const Task& t : p.tasks) encode_task(w, t);
}

Program decode_program(std::string_view& in) {
  Reader r(in);
  Program p;
  p.strategy = r.text();
  p.devices = r.pods<ProgramDevice>();
  p.samples = r.pod<double>();
  p.tokens = r.pod<double>();
  p.model_flops = r.pod<double>();
  p.compute_source_s = r.pod<std::array<double, kCostSources>>();
  if (r.pod<bool>()) p.repeated_step = r.pod<RepeatedStep>();
  const size_t n = r.size();
  if (n > in.size()) Reader::fail();  // every task takes more than a byte
  p.tasks.reserve(n);
  for (size_t i = 0; i < n; ++i) p.tasks.push_back(decode_task(r));
  return p;
}

}  // namespace hetsim
