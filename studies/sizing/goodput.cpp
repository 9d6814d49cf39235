// File: studies/sizing/goodput.cpp
#include "studies/sizing/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/text.hpp"
#include "base/units.hpp"

namespace hetsim {

double goodput_at(double tau, double delta, double restart, double mtbf) {
  // W / T with T / W = M e^(R/M) (e^((tau + delta)/M) - 1) / tau; expm1 keeps the small-rate
  // limit exact (tau / (tau + delta) when failures never come).
  const double per_work = mtbf * std::exp(restart / mtbf) * std::expm1((tau + delta) / mtbf) / tau;
  return per_work > 0 && std::isfinite(per_work) ? 1.0 / per_work : 0.0;
}

Goodput expected_goodput(const Reliability& r, long gpus, long nodes, double checkpoint_bytes) {
  constexpr double kYear = 365.25 * 86400;
  Goodput g;
  g.checkpoint_bytes = checkpoint_bytes;
  const double rate = (static_cast<double>(gpus) * r.gpu_failures_per_year + static_cast<double>(nodes) * r.node_failures_per_year) / kYear;
  const double write = r.checkpoint_write_Bps.value_or(Reliability::kLlama3CheckpointWritePerGpuBps * static_cast<double>(gpus));
  g.checkpoint_s = write > 0 ? checkpoint_bytes / write : 0;
  if (!(rate > 0)) {  // no failures: no checkpoint is needed for them
    g.mtbf_s = std::numeric_limits<double>::infinity();
    g.interval_s = std::numeric_limits<double>::infinity();
    return g;
  }
  g.mtbf_s = 1.0 / rate;
  // Golden section on log(tau) over [delta / 1e3, 100 M] (the function is unimodal in tau).
  const double delta = std::max(g.checkpoint_s, 1e-9);
  double lo = std::log(delta * 1e-3), hi = std::log(100 * g.mtbf_s);
  const double phi = (std::sqrt(5.0) - 1) / 2;
  auto f = [&](double x) { return goodput_at(std::exp(x), g.checkpoint_s, r.restart_s, g.mtbf_s); };
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo), fa = f(a), fb = f(b);
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    if (fa < fb) {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = f(b);
    } else {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = f(a);
    }
  }
  g.interval_s = std::exp((lo + hi) / 2);
  g.goodput = f((lo + hi) / 2);
  return g;
}

std::string reliability_assumption(const Reliability& r) {
  std::string s = "failures: " + format_double("%.3g", r.gpu_failures_per_year) + " per GPU-year";
  if (r.gpu_failures_per_year == Reliability::kLlama3GpuFailuresPerYear) {
    s += " (Llama 3 405B: 419 interruptions in 54 days on 16 384 H100, Meta 2024)";
  }
  if (r.node_failures_per_year > 0) s += " + " + format_double("%.3g", r.node_failures_per_year) + " per node-year";
  s += "; checkpoint write " + (r.checkpoint_write_Bps ? format_double("%.4g GB/s", *r.checkpoint_write_Bps / 1e9)
                                                       : std::string("122 MB/s per GPU (Llama 3's storage: 2 TB/s for 16 384 GPUs)"));
  s += "; restart " + format_duration(r.restart_s) + (r.restart_given ? "" : " (assumed)");
  s += "; checkpoint interval chosen to maximise goodput (Daly 2006)";
  return s;
}

}  // namespace hetsim
