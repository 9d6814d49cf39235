// File: studies/validation/published_mfu.hpp
// The highest MFU published for a GPU and a kind of training (studies/validation/mfu/published-mfu.yaml,
// each figure with its source), so that a simulated MFU above anything published is said to be.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernels_profile/device.hpp"
#include "topologies/cluster.hpp"
#include "workloads/model.hpp"

namespace hetsim {

struct PublishedMfu {
  std::string gpu, setting, gemm;  // setting: dense | moe; gemm: bf16 (fp16 too) | fp8 | mxfp8 | nvfp4 | tf32 | fp32
  double mfu = 0;
  std::string source;
  Vendor vendor = Vendor::kNvidia;  // the GPU's (from its device file)
  double gemm_peak = 0;             // the GPU's dense peak at `gemm`, FLOP/s
};

// Reads a published-MFU file. Throws InputError naming file, line and field.
[[nodiscard]] std::vector<PublishedMfu> load_published_mfu(const std::filesystem::path& file);
// The shipped table (data_root()/studies/validation/mfu/published-mfu.yaml), read once; empty where
// the data folder has none (nothing is checked then).
[[nodiscard]] const std::vector<PublishedMfu>& shipped_published_mfu();

// The kind of training a run of `model` is: its setting (dense or moe) and GEMM input format.
[[nodiscard]] std::string mfu_setting(const ModelSpec& model);
[[nodiscard]] std::string mfu_gemm(const ModelSpec& model);
// A GEMM format as the terminal says it: "16-bit (bf16 or fp16)" for bf16.
[[nodiscard]] std::string mfu_gemm_label(const std::string& gemm);

// The highest published MFU that applies to `model` on `cluster`, for the model's setting and GEMM
// format: each GPU type's own figure, else a stand-in's (a GPU of its vendor with the same peak at
// that format, else the highest figure on any GPU; `gpu` says so); nullopt when nothing is published
// for the setting and format (nothing to compare with). One GPU type: its figure. A mix: each type's figure weighted by its share of the
// cluster's peak (the mix's MFU were each type at its best), `gpu` naming the types ("A + B") and
// `source` each figure's.
[[nodiscard]] std::optional<PublishedMfu> published_mfu_ceiling(const std::vector<PublishedMfu>& table, const ModelSpec& model,
                                                                const Cluster& cluster);
// The cluster's GPU types with no figure, their own or a stand-in's, for the model's setting and GEMM format.
[[nodiscard]] std::vector<std::string> unpublished_gpus(const std::vector<PublishedMfu>& table, const ModelSpec& model,
                                                        const Cluster& cluster);

}  // namespace hetsim
