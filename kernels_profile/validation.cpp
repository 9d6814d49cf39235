// File: kernels_profile/validation.cpp
#include "kernels_profile/validation.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "base/csv_reader.hpp"
#include "base/data_dir.hpp"
#include "base/text.hpp"
#include "kernels_profile/layer_kernels.hpp"

namespace hetsim {

std::vector<KernelValidation> validate_kernels(const KernelTables& tables) {
  std::vector<KernelValidation> out;
  for (const auto& [key, series] : tables.series()) {
    KernelValidation v;
    v.device = std::get<0>(key);
    v.kernel = std::get<1>(key);
    v.dtype = std::get<2>(key);
    const std::vector<KernelSample>& samples = series.samples();
    v.samples = static_cast<int>(samples.size());
    std::vector<double>& fit_err = v.fit_errors;
    std::vector<double>& interp_err = v.interp_errors;
    for (size_t i = 0; i < samples.size(); ++i) {
      const KernelSample& s = samples[i];
      if (const std::optional<double> f = series.fitted(s)) fit_err.push_back(std::fabs(*f - s.seconds) / s.seconds);
      const KernelSeries rest = series.without(i);
      const std::optional<KernelEstimate> e = series.is_gemm() ? rest.gemm(s.shape) : rest.by_bytes(s.bytes);
      if (e && e->source == CostSource::kInterpolated) interp_err.push_back(std::fabs(e->seconds - s.seconds) / s.seconds);
    }
    out.push_back(std::move(v));
  }
  return out;
}

namespace {

// Whether the file's header (its first line that is not a '#' comment) has the column `attention`.
bool has_attention_column(const std::filesystem::path& file) {
  check_input_file(file);
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.ends_with('\r')) line.pop_back();
    return (line + ",").find(",attention,") != std::string::npos;
  }
  return false;
}

}  // namespace

std::optional<LayerMeasurement> LayerRowReader::read(const CsvRow& row, const LayerColumns& c) {
  LayerMeasurement m;
  if (c.attention) {
    const std::string& a = row.text(*c.attention);
    // attention path, and for an fp8 layer how its casts ran
    static const std::vector<std::pair<std::string, std::string>> kKinds{
        {"flash", ""}, {"unfused", ""}, {"flash+compiled-casts", "compiled"}, {"flash+shape-compiled-casts", "shape-compiled"},
        {"flash+eager-casts", "eager"}};
    const auto kind = std::find_if(kKinds.begin(), kKinds.end(), [&](const auto& k) { return k.first == a; });
    if (kind == kKinds.end()) {
      std::vector<std::string> names;
      for (const auto& k : kKinds) names.push_back(k.first);
      row.error(*c.attention, in_quotes(a) + " is not one of: " + join(names));
      return std::nullopt;
    }
    m.flash = a.starts_with("flash");
    m.casts = kind->second;
    m.pytorch = true;  // only kernels_profile/torch's files have the column
  }
  m.device = row.required(c.device);
  // The model file's own bounds (workloads/README.md): widths and tokens 2^24, heads 2^16; a
  // micro-batch of 2^20 samples. Beyond them a layer's predicted time is no GPU's.
  constexpr long kMaxWidth = 1L << 24, kMaxHeads = 1L << 16, kMaxTokens = 1L << 24, kMaxSamples = 1L << 20;
  const auto h = row.integer(c.hidden, 1, kMaxWidth), a = row.integer(c.heads, 1, kMaxHeads), f = row.integer(c.ffn, 1, kMaxWidth),
             s = row.integer(c.seq, 1, kMaxTokens), b = row.integer(c.micro_batch, 1, kMaxSamples);
  const std::optional<DType> t = dtype_from_name(row.text(c.dtype));
  if (!t) row.error(c.dtype, in_quotes(row.text(c.dtype)) + " is not one of: fp32, tf32, fp16, bf16, fp8");
  m.gpu = row.required(c.gpu, "the GPU it was measured on");
  const std::optional<std::string> date = row.date(c.date, "when it was measured");
  if (!h || !a || !f || !s || !b || !t || m.device.empty() || m.gpu.empty() || !date) return std::nullopt;
  m.date = *date;
  if ((*t == DType::kFp8) != !m.casts.empty()) {
    row.error(c.dtype, *t == DType::kFp8 ? "an fp8 layer says how its casts ran: attention flash+shape-compiled-casts, flash+compiled-casts or flash+eager-casts"
                                         : "only an fp8 layer has casts (attention " + row.text(*c.attention) + ")");
    return std::nullopt;
  }
  if (*h % *a != 0) {
    row.error(c.heads, "hidden " + std::to_string(*h) + " is not divisible by heads " + std::to_string(*a));
    return std::nullopt;
  }
  // A GPU the layer could have run on: a device file, the dtype, the fused kernel (a bf16 row
  // on V100 was dropped from the table without a word).
  if (std::find(names_.begin(), names_.end(), m.device) == names_.end()) {
    row.error(c.device, unknown_device_message(m.device, names_));
    return std::nullopt;
  }
  auto it = loaded_.find(m.device);
  if (it == loaded_.end()) it = loaded_.emplace(m.device, load_shipped_device(m.device, Diagnostic{file_, row.line(), 0, "device", ""})).first;
  if (!it->second.supports(*t)) {
    row.error(c.dtype, m.device + " has no " + std::string(dtype_name(*t)) + " peak (kernels_profile/devices/" + m.device + ".yaml)");
    return std::nullopt;
  }
  if (m.flash && !it->second.flash_attention) {
    row.error(*c.attention, m.device + " has no fused (flash) attention kernel (kernels_profile/devices/" + m.device + ".yaml: flash_attention)");
    return std::nullopt;
  }
  m.hidden = *h;
  m.heads = *a;
  m.ffn_hidden = *f;
  m.seq_len = *s;
  m.micro_batch = *b;
  m.dtype = *t;
  return m;
}

LayerRowReader::LayerRowReader(const std::filesystem::path& file) : file_(file.string()), names_(shipped_device_names()) {}

std::string layer_key(const LayerMeasurement& m) {
  return m.device + " " + std::to_string(m.hidden) + " " + std::to_string(m.heads) + " " + std::to_string(m.ffn_hidden) + " " +
         std::to_string(m.seq_len) + " " + std::to_string(m.micro_batch) + " " + std::string(dtype_name(m.dtype)) +
         (m.flash ? " flash " : " unfused ") + m.casts + (m.pytorch ? " pytorch " : " cuda ") + m.date;
}

std::vector<LayerMeasurement> load_layer_measurements(const std::filesystem::path& file) {
  std::vector<std::string> columns{"device", "hidden", "heads", "ffn_hidden", "seq_len", "micro_batch", "dtype",
                                   "fwd_s",  "bwd_s",  "gpu",   "driver",     "clock_mhz", "date"};
  const bool attention_column = has_attention_column(file);
  if (attention_column) columns.push_back("attention");
  enum Col { kDevice, kHidden, kHeads, kFfn, kSeq, kMb, kDtype, kFwd, kBwd, kGpu, kDriver, kClock, kDate, kAttention, kFwdMhz, kStepMhz, kSustained };
  const LayerColumns cols{kDevice, kHidden, kHeads, kFfn, kSeq, kMb, kDtype, kGpu, kDate,
                          attention_column ? std::optional<size_t>(kAttention) : std::nullopt};
  std::vector<LayerMeasurement> out;
  LayerRowReader reader(file);
  std::map<std::string, int> seen;  // each layer shape and run -> its line
  read_csv(file, columns, [&](const CsvRow& row) {
    std::optional<LayerMeasurement> m = reader.read(row, cols);
    const auto fwd = row.seconds(kFwd), bwd = row.seconds(kBwd);
    // The clocks the passes ran at (0: not known) and the replays before the timing.
    const std::optional<double> fwd_mhz = row.sm_clock(kFwdMhz, kClock), step_mhz = row.sm_clock(kStepMhz, kClock);
    const std::optional<double> sustained = row.has(kSustained) ? row.number(kSustained, 0, false, 3600) : 0.0;
    if (!m || !fwd || !bwd || !fwd_mhz || !step_mhz || (!sustained && !row.text(kSustained).empty())) return;
    // One row per layer shape and run (several runs are repeats, each a row of the table).
    if (const auto [at, fresh] = seen.emplace(layer_key(*m), row.line()); !fresh) {
      row.error(kDate, "a second row for this layer in the run of " + m->date + " (the first is at line " + std::to_string(at->second) + ")");
      return;
    }
    m->fwd_s = *fwd;
    m->bwd_s = *bwd;
    m->fwd_mhz = *fwd_mhz;
    m->step_mhz = *step_mhz;
    m->sustained_s = sustained.value_or(0);
    out.push_back(*m);
  }, attention_column ? std::vector<std::string>{"fwd_sm_clock_mhz", "step_sm_clock_mhz", "sustained_s"} : std::vector<std::string>{});
  return out;
}

LayerPrediction predict_layer(const LayerMeasurement& m, const Device& device, const CostModel& cost) {
  ModelSpec spec;
  spec.name = "validation-layer";
  spec.family = Family::kGpt;
  spec.layers = 1;
  spec.hidden = m.hidden;
  spec.heads = m.heads;
  spec.kv_heads = m.heads;
  spec.ffn_hidden = m.ffn_hidden;
  spec.seq_len = m.seq_len;
  spec.vocab = 1;
  spec.training.global_batch = m.micro_batch;
  spec.training.micro_batch = m.micro_batch;
  // An fp8 layer: bf16 everywhere but its GEMMs (recipe fp8-current, as the measurement ran).
  const DType dtype = m.dtype == DType::kFp8 ? DType::kBf16 : m.dtype;
  spec.training.dtype = dtype;
  if (m.dtype == DType::kFp8) spec.training.gemm_precision = GemmPrecision::kFp8Current;
  // A layer measured in PyTorch ran as plain autograd runs it (kernels_profile/torch/layer_bench.py).
  if (m.pytorch) spec.training.kernels = TrainingKernels::kEager;
  const OpGraph g = build_op_graph(spec, m.micro_batch, dtype, KernelSupport{m.flash});
  const double e = dtype_bytes(dtype);
  LayerPrediction p;
  for (const Op& op : g.ops) {
    if (op.layer != 0) continue;  // the transformer layer only: no embedding, head or loss
    // The same product without its fp8 casts, and without autograd's kernels around it too: the
    // casts' and those kernels' shares, by difference.
    Op uncast = op;
    uncast.cast_fwd_bytes = uncast.cast_bwd_bytes = uncast.cast_fwd_transpose_bytes = uncast.cast_bwd_transpose_bytes = 0;
    Op plain = uncast;
    plain.eager_bias_grad = false;
    plain.eager_views = 0;
    plain.eager_expert_bias = false;
    const EagerGradBytes eager = eager_grad_bytes(op, e);
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      const OpCost c = cost.op_time(device, op, dtype, pass);
      (pass == Pass::kForward ? p.fwd_s : p.bwd_s) += c.seconds;
      for (int s = 0; s < kCostSources; ++s) p.sources[s] += c.by_source[s];
      ClassSeconds& by = p.by_class[pass == Pass::kForward ? 0 : 1];
      const double without_casts = cost.op_time(device, uncast, dtype, pass).seconds;
      const double body = cost.op_time(device, plain, dtype, pass).seconds;
      by[static_cast<int>(op_kernel_class(op.kind))] += body;
      by[static_cast<int>(KernelClass::kCast)] += c.seconds - without_casts;
      // Autograd's kernels, all on the roofline: their time in proportion to their bytes.
      if (const double extra = without_casts - body; extra > 0 && eager.total() > 0) {
        by[static_cast<int>(KernelClass::kBiasGrad)] += extra * eager.bias_grad / eager.total();
        by[static_cast<int>(KernelClass::kFill)] += extra * eager.fill / eager.total();
        by[static_cast<int>(KernelClass::kCopy)] += extra * eager.copy / eager.total();
        by[static_cast<int>(KernelClass::kResidual)] += extra * eager.add / eager.total();
      }
    }
  }
  return p;
}

}  // namespace hetsim
