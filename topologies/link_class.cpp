// File: topologies/link_class.cpp
// The defaults table. Each fraction is of the per-direction wire rate that the cluster file
// states; each row names where it comes from (a measurement, or "assumed").
#include "topologies/link_class.hpp"

#include "base/text.hpp"

namespace hetsim {

std::string_view link_class_name(LinkClass c) {
  switch (c) {
    case LinkClass::kNvlink1: return "nvlink1";
    case LinkClass::kNvlink2: return "nvlink2";
    case LinkClass::kNvlink3: return "nvlink3";
    case LinkClass::kNvlink4: return "nvlink4";
    case LinkClass::kNvlink5: return "nvlink5";
    case LinkClass::kXgmi: return "xgmi";
    case LinkClass::kPcie: return "pcie";
    case LinkClass::kNic: return "nic";
  }
  return "?";
}

const std::vector<AchievableDefault>& achievable_table() {
  static const std::vector<AchievableDefault> table{
      {LinkClass::kNvlink1, 0.80, "assumed: no public per-link collective measurement found; NVLink3/4 protocol overhead (~20 %)"},
      {LinkClass::kNvlink2, 0.80, "assumed: no public per-link collective measurement found; NVLink3/4 protocol overhead (~20 %)"},
      {LinkClass::kNvlink3, 235.0 / 300,
       "NCCL's tuning model caps Ampere (sm80) NVLink bus bandwidth at 235 GB/s of 300 (NVIDIA/nccl "
       "src/graph/tuning.cc, `if (compCap80) busBw = std::min(busBw, 235.0f)`)"},
      {LinkClass::kNvlink4, 370.0 / 450,
       "NCCL maintainer: 'effective NVLink bandwidth of 370GB/s' of the 450 GB/s line rate, seen as busbw of "
       "non-allreduce operations (NVIDIA/nccl-tests issue #212; NVIDIA/nccl issue #1442)"},
      {LinkClass::kNvlink5, 721.8 / 900,
       "NCCL's topology model for Blackwell (sm100): SM100_NVLINK_BW 40.1 GB/s per link x 18 NVLink5 links = 721.8 GB/s "
       "of the 900 GB/s line rate (NVIDIA/nccl src/graph/topo.h v2.27, quoted with its 'maxBw 721.8' log in NVIDIA/nccl "
       "issue #1807, 2025-08-13); the same issue reports 830 GB/s all-reduce busbw on 8 x B200, with NVLS"},
      {LinkClass::kXgmi, 46.5 / 64,
       "TransferBench on MI300X: 45-48 GB/s per xGMI link of 64 GB/s (ROCm/rocm-blogs, mi300x-rccl-xgmi); midpoint"},
      {LinkClass::kPcie, 0.80, "assumed: PCIe TLP/DLLP overhead, typical host-device copy rate (~26 of 32 GB/s on Gen4 x16)"},
      {LinkClass::kNic, 0.92,
       "NCCL maintainers: 46-48 GB/s per 400 Gb/s NDR NIC (NVIDIA/nccl-tests issue #290; 'up to 48-49' in #267) and "
       "24 GB/s per 200 Gb/s HDR NIC (nccl-tests #119; 192 GB/s all-reduce busbw on DGX A100's 8 x 200G, NVIDIA/nccl "
       "#812): 0.92-0.96 of the line rate; the low end"},
  };
  return table;
}

namespace {

Achievable from_table(LinkClass c) {
  for (const AchievableDefault& row : achievable_table()) {
    if (row.link_class == c) return {row.fraction, c, "default for " + std::string(link_class_name(c)) + ": " + std::string(row.source)};
  }
  return {1.0, c, "wire rate"};
}

// A stated fraction is the user's own, measured on their fabric, and stands. The table's default is
// slowed by the calibration profile in force on the node's GPU type, where it sets an excess for
// this kind of link (transfers take 1 + excess times as long).
Achievable stated_or(const std::optional<double>& stated, const std::string& stated_source, LinkClass c, const Device& gpu,
                     double FittedCosts::*excess, std::string_view parameter) {
  if (stated) return {*stated, c, stated_source};
  Achievable a = from_table(c);
  const double x = gpu.fitted.*excess;
  if (x > 0) {
    a.fraction /= 1 + x;
    a.source += "; divided by 1 + " + format_double("%.3g", x) + ": " + std::string(parameter) + " of the calibration profile in force on " +
                gpu.name + (gpu.calibration.empty() ? std::string() : ", " + gpu.calibration);
  }
  return a;
}

}  // namespace

int nvlink_generation(const Device& gpu) {
  if (gpu.vendor != Vendor::kNvidia) return 0;
  const std::string& n = gpu.name;
  if (n.starts_with("P100")) return 1;
  if (n.starts_with("V100")) return 2;
  if (n.starts_with("A100") || n.starts_with("A800")) return 3;
  if (n.starts_with("H100") || n.starts_with("H200") || n.starts_with("H800") || n.starts_with("H20")) return 4;
  if (n.starts_with("B200") || n.starts_with("B300") || n.starts_with("GB200") || n.starts_with("GB300")) return 5;
  return 0;
}

Achievable intra_achievable(const NodeType& node) {
  LinkClass c = LinkClass::kPcie;
  switch (node.intra.fabric) {
    case IntraFabric::kXgmiMesh: c = LinkClass::kXgmi; break;
    case IntraFabric::kPcie: c = LinkClass::kPcie; break;
    case IntraFabric::kNvswitch:
    case IntraFabric::kNvlinkMesh: {
      const int gen = nvlink_generation(node.gpu);
      c = gen == 1 ? LinkClass::kNvlink1 : gen == 2 ? LinkClass::kNvlink2 : gen == 4 ? LinkClass::kNvlink4 : gen == 5 ? LinkClass::kNvlink5 : LinkClass::kNvlink3;
      break;
    }
  }
  return stated_or(node.intra.achievable, node.intra.achievable_source, c, node.gpu, &FittedCosts::intra_time_excess, "intra_time_excess");
}

Achievable nic_achievable(const NodeType& node) {
  return stated_or(node.nic.achievable, node.nic.achievable_source, LinkClass::kNic, node.gpu, &FittedCosts::nic_time_excess, "nic_time_excess");
}

Achievable pcie_achievable(const NodeType& node) {
  if (node.intra.fabric == IntraFabric::kPcie) return intra_achievable(node);  // the fabric is these links
  return from_table(LinkClass::kPcie);
}

SwitchReduction switch_reduction(const NodeType& node) {
  if (node.intra.fabric != IntraFabric::kNvswitch) return {};
  // NCCL's NVLS latency (Simple protocol) on NVLink: hwLat[NVLINK][NVLS][SIMPLE] = 23 us in
  // NVIDIA/nccl src/graph/tuning.cc (2.19 and later).
  constexpr double kNvlsLatency = 23e-6;
  if (node.intra.switch_reduction_Bps) {
    return {*node.intra.switch_reduction_Bps, kNvlsLatency, node.intra.switch_reduction_source};
  }
  if (nvlink_generation(node.gpu) != 4) return {};
  // Third-generation NVSwitch (HGX H100/H200): the NCCL maintainer gives the NVLS all-reduce peak on
  // 8 GPUs as algbw ~275 GB/s (busbw ~480), NVIDIA/nccl-tests issue #212; NVIDIA/nccl issue #1455
  // measures algbw 258-273 GB/s on 5-8 H100. Fitted on those 8 x H100 measurements.
  return {275e9, kNvlsLatency,
          "default for NVSwitch gen3 (H100/H200): 275 GB/s of reduced data per node, fitted on 8 x H100 NVLS "
          "all-reduce (algbw ~275 GB/s, NVIDIA/nccl-tests #212; 258-273 GB/s, NVIDIA/nccl #1455)"};
}

}  // namespace hetsim
