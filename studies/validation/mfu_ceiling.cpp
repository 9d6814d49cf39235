// File: studies/validation/mfu_ceiling.cpp
#include "studies/validation/mfu_ceiling.hpp"

#include "base/text.hpp"
#include "studies/validation/published_mfu.hpp"

namespace hetsim {

nlohmann::json check_mfu(std::ostream& out, const Report& report, const ModelSpec& model, const Cluster& cluster) {
  if (!report.feasible || !(report.mfu > 0)) return nullptr;
  if (report.mfu > 1) {  // an 8- or 4-bit recipe's GEMMs run faster than the peak MFU counts against
    out << "\nMFU " << format_double("%.1f %%", 100 * report.mfu) << " is above 100 %: MFU counts model FLOPs over the dense "
        << "peak of the training dtype, which " << mfu_gemm_label(mfu_gemm(model)) << " GEMMs exceed\n";
  }
  const std::optional<PublishedMfu> top = published_mfu_ceiling(shipped_published_mfu(), model, cluster);
  if (!top) {
    const std::vector<std::string> none = unpublished_gpus(shipped_published_mfu(), model, cluster);
    out << "\nMFU " << format_double("%.1f %%", 100 * report.mfu) << ": not checked against published runs (none shipped for "
        << join(none) << ", " << mfu_setting(model) << " training with " << mfu_gemm_label(mfu_gemm(model))
        << " GEMMs: studies/validation/mfu/published-mfu.yaml)\n";
    return nullptr;
  }
  const bool above = report.mfu > top->mfu;
  if (above) {
    out << "\nMFU " << format_double("%.1f %%", 100 * report.mfu) << " is above the highest published for " << top->gpu << ", "
        << top->setting << " training with " << mfu_gemm_label(top->gemm) << " GEMMs: " << format_double("%.1f %%", 100 * top->mfu) << " ("
        << (top->gpu.find(" + ") == std::string::npos ? top->source
                                                       : "each GPU type at its highest published MFU, weighted by its share of the peak; "
                                                         "the report's mfu_published.source names them")
        << ")\n";
  }
  return {{"highest", top->mfu}, {"gpu", top->gpu}, {"setting", top->setting}, {"gemm", top->gemm}, {"source", top->source},
          {"above", above}};
}

}  // namespace hetsim
