// File: studies/validation/mfu_ceiling.cpp
#include "studies/validation/mfu_ceiling.hpp"

#include "base/text.hpp"
#include "studies/validation/published_mfu.hpp"

namespace hetsim {

nlohmann::json check_mfu(std::ostream& out, const Report& report, const ModelSpec& model, const Cluster& cluster) {
  if (!report.feasible || !(report.mfu > 0)) return nullptr;
  const std::optional<PublishedMfu> top = published_mfu_ceiling(shipped_published_mfu(), model, cluster);
  if (!top) return nullptr;
  const bool above = report.mfu > top->mfu;
  if (above) {
    out << "\nMFU " << format_double("%.1f %%", 100 * report.mfu) << " is above the highest published for " << top->gpu << ", "
        << top->setting << " training with " << top->gemm << " GEMMs: " << format_double("%.1f %%", 100 * top->mfu)
        << " (" << top->source << ")\n";
  }
  return {{"highest", top->mfu}, {"gpu", top->gpu}, {"setting", top->setting}, {"gemm", top->gemm}, {"source", top->source},
          {"above", above}};
}

}  // namespace hetsim
