// File: kernels_profile/layer_profile.hpp
// Per-layer profiles that users already have (forward, backward and optimizer time per layer,
// per micro-batch size and tensor-parallel degree, measured on one GPU of a type, as Sailor,
// Metis and AMP collect them). Where a profile covers a block of the model, hetsim uses it
// instead of kernel-level costs. Format in kernels_profile/README.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hetsim {

struct LayerTimes {
  double fwd_s = 0;
  double bwd_s = 0;
  double optimizer_s = 0;
  bool interpolated = false;  // between two profiled micro-batch sizes
  // Where the times come from: the profile's file and row line (interpolated: the lower row's, and
  // `line_above` the upper's), for errors about them found later.
  std::string file;
  int line = 0, line_above = 0;
};

struct LayerProfileRow {
  std::string model;
  std::string device;
  std::string layer;  // "embedding", "transformer" (every transformer layer), "layerN", "head"
  long micro_batch = 0;
  long tp = 1;
  LayerTimes times;
  std::string source;
  int line = 0;  // in the file
};

class LayerProfiles {
 public:
  // Throws InputError naming file, line and column.
  [[nodiscard]] static LayerProfiles load(const std::filesystem::path& file);

  // Times of `block` ("embedding", "layer7", "head") of `model` on `device` at `micro_batch`
  // (tensor-parallel degree 1): an exact row, or linear interpolation between the two nearest
  // profiled micro-batch sizes around it; a "layerN" row wins over a "transformer" row.
  [[nodiscard]] std::optional<LayerTimes> lookup(const std::string& model, const std::string& device,
                                                 const std::string& block, long micro_batch) const;
  [[nodiscard]] const std::vector<LayerProfileRow>& rows() const { return rows_; }

  // Checks the profile against the run it is given to: rows of `model` naming a layer past its
  // `layers` (layer0 .. layerN-1) are errors, and so is a profile of which no row would be used
  // (none for `model` at tp 1 on one of `devices`, the cluster's GPU types): a profile that
  // silently applies to nothing is a mistake, not a choice. Throws InputError naming the file.
  void check_applies_to(const std::string& model, long layers, const std::vector<std::string>& devices) const;

 private:
  [[nodiscard]] std::optional<LayerTimes> lookup_exact_layer(const std::string& model, const std::string& device,
                                                             const std::string& layer, long micro_batch) const;
  std::vector<LayerProfileRow> rows_;
  std::string file_;
};

}  // namespace hetsim
