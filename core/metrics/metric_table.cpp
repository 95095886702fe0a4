#include "core/metrics/metric_table.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

namespace tprof {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Arm architected common events (Arm ARM, PMUv3 common event numbers). The telemetry
// specifications in shared/reference list the same codes; a test checks them against those.
const std::vector<MetricEvent>& ArmCommonEvents() {
  static const std::vector<MetricEvent> events = {
      {"L1I_CACHE_REFILL", 0x01},
      {"L1I_TLB_REFILL", 0x02},
      {"L1D_CACHE_REFILL", 0x03},
      {"L1D_CACHE", 0x04},
      {"L1D_TLB_REFILL", 0x05},
      {"INST_RETIRED", 0x08},
      {"BR_MIS_PRED", 0x10},
      {"CPU_CYCLES", 0x11},
      {"BR_PRED", 0x12},
      {"L1I_CACHE", 0x14},
      {"L2D_CACHE", 0x16},
      {"L2D_CACHE_REFILL", 0x17},
      {"INST_SPEC", 0x1B},
      {"BR_RETIRED", 0x21},
      {"BR_MIS_PRED_RETIRED", 0x22},
      {"STALL_FRONTEND", 0x23},
      {"STALL_BACKEND", 0x24},
      {"L1D_TLB", 0x25},
      {"L1I_TLB", 0x26},
      {"L3D_CACHE_REFILL", 0x2A},
      {"L3D_CACHE", 0x2B},
      {"L2D_TLB_REFILL", 0x2D},
      {"L2D_TLB", 0x2F},
      {"DTLB_WALK", 0x34},
      {"ITLB_WALK", 0x35},
      {"LL_CACHE_RD", 0x36},
      {"LL_CACHE_MISS_RD", 0x37},
      {"OP_RETIRED", 0x3A},
      {"OP_SPEC", 0x3B},
      {"STALL", 0x3C},
      {"STALL_SLOT_BACKEND", 0x3D},
      {"STALL_SLOT_FRONTEND", 0x3E},
      {"STALL_SLOT", 0x3F},
      {"LD_SPEC", 0x70},
      {"ST_SPEC", 0x71},
      {"DP_SPEC", 0x73},
      {"ASE_SPEC", 0x74},
      {"VFP_SPEC", 0x75},
      {"CRYPTO_SPEC", 0x77},
      {"BR_IMMED_SPEC", 0x78},
      {"BR_RETURN_SPEC", 0x79},
      {"BR_INDIRECT_SPEC", 0x7A},
  };
  return events;
}

// Level 1 as published with perf 6.2. `erratum` subtracts the extra slot per cycle that
// STALL_SLOT and STALL_SLOT_FRONTEND count on N2 r0p0-r0p2.
std::vector<Metric> ArmLevelOne(int slots, bool erratum) {
  std::string s = std::to_string(slots);
  std::string stall_slot = erratum ? "(STALL_SLOT - CPU_CYCLES)" : "STALL_SLOT";
  std::string stall_fe = erratum ? "(STALL_SLOT_FRONTEND - CPU_CYCLES)" : "STALL_SLOT_FRONTEND";
  std::string used = "(1 - " + stall_slot + " / (" + s + " * CPU_CYCLES))";
  return {
      {"frontend_bound",
       "100 * " + stall_fe + " / (" + s + " * CPU_CYCLES)",
       "%",
       {"l1", "TopdownL1"}},
      {"backend_bound",
       "100 * STALL_SLOT_BACKEND / (" + s + " * CPU_CYCLES)",
       "%",
       {"l1", "TopdownL1"}},
      {"retiring", "100 * (OP_RETIRED / OP_SPEC) * " + used, "%", {"l1", "TopdownL1"}},
      {"bad_speculation", "100 * (1 - OP_RETIRED / OP_SPEC) * " + used, "%", {"l1", "TopdownL1"}},
  };
}

// The N2 metric groups published with perf 6.2 (shared/reference/topdown.md).
std::vector<Metric> NeoverseN2Groups(int slots) {
  std::string s = std::to_string(slots);
  std::vector<Metric> m = {
      {"l1d_tlb_miss_rate", "100 * L1D_TLB_REFILL / L1D_TLB", "%", {"TLB"}},
      {"l1i_tlb_miss_rate", "100 * L1I_TLB_REFILL / L1I_TLB", "%", {"TLB"}},
      {"l2_tlb_miss_rate", "100 * L2D_TLB_REFILL / L2D_TLB", "%", {"TLB"}},
      {"dtlb_walk_rate", "100 * DTLB_WALK / L1D_TLB", "%", {"TLB"}},
      {"itlb_walk_rate", "100 * ITLB_WALK / L1I_TLB", "%", {"TLB"}},
      {"dtlb_mpki", "DTLB_WALK / INST_RETIRED * 1000", "MPKI", {"TLB"}},
      {"itlb_mpki", "ITLB_WALK / INST_RETIRED * 1000", "MPKI", {"TLB"}},
      {"l1d_cache_miss_rate", "100 * L1D_CACHE_REFILL / L1D_CACHE", "%", {"Cache"}},
      {"l1i_cache_miss_rate", "100 * L1I_CACHE_REFILL / L1I_CACHE", "%", {"Cache"}},
      {"l2d_cache_miss_rate", "100 * L2D_CACHE_REFILL / L2D_CACHE", "%", {"Cache"}},
      {"l1d_cache_mpki", "L1D_CACHE_REFILL / INST_RETIRED * 1000", "MPKI", {"Cache"}},
      {"l1i_cache_mpki", "L1I_CACHE_REFILL / INST_RETIRED * 1000", "MPKI", {"Cache"}},
      {"l2d_cache_mpki", "L2D_CACHE_REFILL / INST_RETIRED * 1000", "MPKI", {"Cache"}},
      {"l3d_cache_mpki", "L3D_CACHE_REFILL / INST_RETIRED * 1000", "MPKI", {"Cache"}},
      {"ll_cache_read_mpki", "LL_CACHE_MISS_RD / INST_RETIRED * 1000", "MPKI", {"Cache"}},
      {"ll_cache_read_miss_rate", "100 * LL_CACHE_MISS_RD / LL_CACHE_RD", "%", {"Cache"}},
      {"ll_cache_read_hit_rate",
       "100 * (LL_CACHE_RD - LL_CACHE_MISS_RD) / LL_CACHE_RD",
       "%",
       {"Cache"}},
      {"branch_miss_pred_rate", "100 * BR_MIS_PRED_RETIRED / BR_RETIRED", "%", {"Branch"}},
      {"branch_mpki", "BR_MIS_PRED_RETIRED / INST_RETIRED * 1000", "MPKI", {"Branch"}},
      {"branch_pki", "BR_RETIRED / INST_RETIRED * 1000", "PKI", {"Branch"}},
      {"retired_rate", "100 * OP_RETIRED / OP_SPEC", "%", {"PEutilization"}},
      {"wasted_rate", "100 * (1 - OP_RETIRED / OP_SPEC)", "%", {"PEutilization"}},
      {"cpu_utilization", "100 * OP_RETIRED / (" + s + " * CPU_CYCLES)", "%", {"PEutilization"}},
      {"spec_ipc", "INST_SPEC / CPU_CYCLES", "ratio", {"PEutilization"}},
      {"retired_ipc", "INST_RETIRED / CPU_CYCLES", "ratio", {"PEutilization"}},
      {"ipc_rate", "100 * INST_RETIRED / CPU_CYCLES / " + s, "%", {"PEutilization"}},
  };
  for (auto [kind, event] : {std::pair{"load", "LD_SPEC"},
                             {"store", "ST_SPEC"},
                             {"data_process", "DP_SPEC"},
                             {"advanced_simd", "ASE_SPEC"},
                             {"float_point", "VFP_SPEC"},
                             {"crypto", "CRYPTO_SPEC"},
                             {"branch_immed", "BR_IMMED_SPEC"},
                             {"branch_return", "BR_RETURN_SPEC"},
                             {"branch_indirect", "BR_INDIRECT_SPEC"}})
    m.push_back({std::string(kind) + "_spec_rate",
                 std::string("100 * ") + event + " / INST_SPEC",
                 "%",
                 {"InstructionMix"}});
  return m;
}

const std::vector<std::vector<std::string>> kArmSlotGroups = {
    {"CPU_CYCLES", "STALL_SLOT", "OP_SPEC", "OP_RETIRED"},
    {"CPU_CYCLES", "STALL_SLOT_FRONTEND"},
    {"CPU_CYCLES", "STALL_SLOT_BACKEND"},
};

MetricTable ArmTable(std::string name, std::string title, uint32_t part, uint32_t min_rev,
                     uint32_t max_rev, int slots, bool erratum) {
  MetricTable t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.midr_implementer = 0x41;
  t.midr_part = part;
  t.min_revision = min_rev;
  t.max_revision = max_rev;
  t.slots = static_cast<uint32_t>(slots);
  t.events = ArmCommonEvents();
  t.metrics = ArmLevelOne(slots, erratum);
  t.event_groups = kArmSlotGroups;
  t.fixed_events = {"CPU_CYCLES"};  // PMCCNTR, the dedicated cycle counter
  t.source = erratum ? "perf 6.2 level-1 formulas with the N2 r0p0-r0p2 erratum correction"
                     : "perf 6.2 / SBSA level-1 formulas, " + std::to_string(slots) + " slots";
  return t;
}

// Intel's raw encoding: event | umask << 8 | cmask << 24.
constexpr uint64_t Intel(uint64_t event, uint64_t umask, uint64_t cmask = 0) {
  return event | umask << 8 | cmask << 24;
}

std::vector<MetricTable> IntelTables() {
  std::vector<MetricTable> tables;
  // Ice Lake and Sapphire Rapids: the PERF_METRICS fixed counter. `slots` leads the group and the
  // topdown-* members are its fractions; the denominator is their sum, not SLOTS.
  const std::string sum =
      "(topdown\\-fe\\-bound + topdown\\-bad\\-spec + topdown\\-retiring + topdown\\-be\\-bound)";
  const std::string fe = "(topdown\\-fe\\-bound / " + sum + " - INT_MISC.UOP_DROPPING / slots)";
  const std::string be = "(topdown\\-be\\-bound / " + sum + ")";
  const std::string ret = "(topdown\\-retiring / " + sum + ")";
  for (auto [name, title, family_model] :
       {std::tuple{"icelake", "Intel Ice Lake (client and server)", "6:106,6:108,6:125,6:126"},
        std::tuple{"sapphirerapids", "Intel Sapphire Rapids", "6:143"}}) {
    MetricTable t;
    t.name = name;
    t.title = title;
    t.source = std::string("Intel PERF_METRICS level 1 (topdown.md); family:model ") + family_model;
    t.slots = 0;
    // perf's names for the PERF_METRICS fixed counter, and Intel's (perf's JSON event lists).
    t.events = {{"slots", Intel(0x00, 0x04), {"TOPDOWN.SLOTS"}},
                {"topdown-retiring", Intel(0x00, 0x80), {"PERF_METRICS.RETIRING"}},
                {"topdown-bad-spec", Intel(0x00, 0x81), {"PERF_METRICS.BAD_SPECULATION"}},
                {"topdown-fe-bound", Intel(0x00, 0x82), {"PERF_METRICS.FRONTEND_BOUND"}},
                {"topdown-be-bound", Intel(0x00, 0x83), {"PERF_METRICS.BACKEND_BOUND"}},
                {"INT_MISC.UOP_DROPPING", Intel(0x0d, 0x10)}};
    t.metrics = {
        {"frontend_bound", "100 * " + fe, "%", {"l1", "TopdownL1"}},
        {"backend_bound", "100 * " + be, "%", {"l1", "TopdownL1"}},
        {"retiring", "100 * " + ret, "%", {"l1", "TopdownL1"}},
        {"bad_speculation",
         "100 * max(1 - (" + fe + " + " + be + " + " + ret + "), 0)",
         "%",
         {"l1", "TopdownL1"}},
    };
    // slots must lead: the kernel refuses topdown-* members under any other leader.
    t.event_groups = {{"slots", "topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
                       "topdown-be-bound", "INT_MISC.UOP_DROPPING"}};
    t.fixed_events = {"slots", "topdown-retiring", "topdown-bad-spec", "topdown-fe-bound",
                      "topdown-be-bound"};
    t.fixed_leads = true;
    t.x86_vendor = "GenuineIntel";
    t.x86_family = 6;
    t.x86_models = std::string(name) == "icelake" ? std::vector<uint32_t>{106, 108, 125, 126}
                                                  : std::vector<uint32_t>{143};
    tables.push_back(std::move(t));
  }
  MetricTable skl;
  skl.name = "skylake";
  skl.title = "Intel Skylake-era cores (Skylake, Cascade Lake, Coffee Lake)";
  skl.source = "Skylake-era level-1 formulas, 4 slots (topdown.md)";
  skl.slots = 4;
  skl.events = {{"CPU_CLK_UNHALTED.THREAD", Intel(0x3c, 0x00)},
                {"IDQ_UOPS_NOT_DELIVERED.CORE", Intel(0x9c, 0x01)},
                {"UOPS_RETIRED.RETIRE_SLOTS", Intel(0xc2, 0x02)},
                {"UOPS_ISSUED.ANY", Intel(0x0e, 0x01)},
                {"INT_MISC.RECOVERY_CYCLES", Intel(0x0d, 0x01, 1)}};
  const std::string slots = "(4 * CPU_CLK_UNHALTED.THREAD)";
  skl.metrics = {
      {"frontend_bound", "100 * IDQ_UOPS_NOT_DELIVERED.CORE / " + slots, "%", {"l1", "TopdownL1"}},
      {"retiring", "100 * UOPS_RETIRED.RETIRE_SLOTS / " + slots, "%", {"l1", "TopdownL1"}},
      {"bad_speculation",
       "100 * (UOPS_ISSUED.ANY - UOPS_RETIRED.RETIRE_SLOTS + 4 * INT_MISC.RECOVERY_CYCLES) / " +
           slots,
       "%",
       {"l1", "TopdownL1"}},
      {"backend_bound",
       "100 * (1 - IDQ_UOPS_NOT_DELIVERED.CORE / " + slots +
           " - (UOPS_ISSUED.ANY + 4 * INT_MISC.RECOVERY_CYCLES) / " + slots + ")",
       "%",
       {"l1", "TopdownL1"}},
  };
  skl.event_groups = {{"CPU_CLK_UNHALTED.THREAD", "IDQ_UOPS_NOT_DELIVERED.CORE",
                       "UOPS_RETIRED.RETIRE_SLOTS", "UOPS_ISSUED.ANY", "INT_MISC.RECOVERY_CYCLES"}};
  skl.fixed_events = {"CPU_CLK_UNHALTED.THREAD"};
  skl.x86_vendor = "GenuineIntel";
  skl.x86_family = 6;
  skl.x86_models = {78, 85, 94, 142, 158, 165, 166};
  tables.push_back(std::move(skl));
  return tables;
}

// AMD's raw encoding: an event number above 0xff puts its high nibble in config bits 32-35.
constexpr uint64_t Amd(uint64_t event, uint64_t umask, uint64_t cmask = 0) {
  return (event & 0xff) | umask << 8 | cmask << 24 | ((event >> 8) & 0xf) << 32;
}

// Zen 4 (6 dispatch slots) and Zen 5 (8): pipeline utilization levels 1 and 2 (topdown.md).
MetricTable AmdTable(std::string name, std::string title, int slots_per_cycle) {
  MetricTable t;
  t.name = std::move(name);
  t.title = std::move(title);
  t.slots = static_cast<uint32_t>(slots_per_cycle);
  t.source = "AMD pipeline utilization, " + std::to_string(slots_per_cycle) +
             " dispatch slots (topdown.md)";
  t.events = {
      {"ls_not_halted_cyc", Amd(0x76, 0x00)},
      {"de_no_dispatch_per_slot.no_ops_from_frontend", Amd(0x1a0, 0x01)},
      {"de_no_dispatch_per_slot.backend_stalls", Amd(0x1a0, 0x1e)},
      {"de_no_dispatch_per_slot.smt_contention", Amd(0x1a0, 0x60)},
      {"de_src_op_disp.all", Amd(0xaa, 0x07)},
      {"ex_ret_ops", Amd(0xc1, 0x00)},
      // no_ops_from_frontend counted with cmask = slots: cycles with no op delivered at all.
      {"de_no_dispatch_per_slot.no_ops_from_frontend.cmask",
       Amd(0x1a0, 0x01, static_cast<uint64_t>(slots_per_cycle))},
      {"ex_no_retire.not_complete", Amd(0xd6, 0x02)},
      {"ex_no_retire.load_not_complete", Amd(0xd6, 0xa2)},
      {"ex_ret_brn_misp", Amd(0xc3, 0x00)},
      {"resyncs_or_nc_redirects", Amd(0x96, 0x00)},
      {"ex_ret_ucode_ops", Amd(0x1c1, 0x00)},
  };
  const std::string n = std::to_string(slots_per_cycle);
  const std::string slots = "(" + n + " * ls_not_halted_cyc)";
  const std::string fe = "de_no_dispatch_per_slot.no_ops_from_frontend / " + slots;
  const std::string be = "de_no_dispatch_per_slot.backend_stalls / " + slots;
  const std::string bad = "(de_src_op_disp.all - ex_ret_ops) / " + slots;
  const std::string latency =
      n + " * de_no_dispatch_per_slot.no_ops_from_frontend.cmask / " + slots;
  const std::string restarts = "(ex_ret_brn_misp + resyncs_or_nc_redirects)";
  t.metrics = {
      {"frontend_bound", "100 * " + fe, "%", {"l1", "PipelineL1"}},
      {"bad_speculation", "100 * " + bad, "%", {"l1", "PipelineL1"}},
      {"backend_bound", "100 * " + be, "%", {"l1", "PipelineL1"}},
      {"smt_contention",
       "100 * de_no_dispatch_per_slot.smt_contention / " + slots,
       "%",
       {"l1", "PipelineL1"}},
      {"retiring", "100 * ex_ret_ops / " + slots, "%", {"l1", "PipelineL1"}},
      {"frontend_bound_latency", "100 * " + latency, "%", {"l2", "PipelineL2"}},
      {"frontend_bound_bandwidth",
       "100 * (" + fe + " - " + latency + ")",
       "%",
       {"l2", "PipelineL2"}},
      {"backend_bound_memory",
       "100 * " + be + " * ex_no_retire.load_not_complete / ex_no_retire.not_complete",
       "%",
       {"l2", "PipelineL2"}},
      {"backend_bound_cpu",
       "100 * " + be + " * (1 - ex_no_retire.load_not_complete / ex_no_retire.not_complete)",
       "%",
       {"l2", "PipelineL2"}},
      {"bad_speculation_mispredicts",
       "100 * " + bad + " * ex_ret_brn_misp / " + restarts,
       "%",
       {"l2", "PipelineL2"}},
      {"bad_speculation_pipeline_restarts",
       "100 * " + bad + " * resyncs_or_nc_redirects / " + restarts,
       "%",
       {"l2", "PipelineL2"}},
      {"retiring_microcode", "100 * ex_ret_ucode_ops / " + slots, "%", {"l2", "PipelineL2"}},
      {"retiring_fastpath",
       "100 * (ex_ret_ops - ex_ret_ucode_ops) / " + slots,
       "%",
       {"l2", "PipelineL2"}},
  };
  t.event_groups = {
      {"ls_not_halted_cyc", "de_no_dispatch_per_slot.no_ops_from_frontend",
       "de_no_dispatch_per_slot.backend_stalls", "de_no_dispatch_per_slot.smt_contention",
       "de_src_op_disp.all", "ex_ret_ops"},
      {"ls_not_halted_cyc", "de_no_dispatch_per_slot.no_ops_from_frontend",
       "de_no_dispatch_per_slot.no_ops_from_frontend.cmask"},
      {"ls_not_halted_cyc", "de_no_dispatch_per_slot.backend_stalls", "ex_no_retire.not_complete",
       "ex_no_retire.load_not_complete"},
      {"ls_not_halted_cyc", "de_src_op_disp.all", "ex_ret_ops", "ex_ret_brn_misp",
       "resyncs_or_nc_redirects"},
      {"ls_not_halted_cyc", "ex_ret_ops", "ex_ret_ucode_ops"},
  };
  return t;
}

// Zen 3 has no dispatch-slot events (PMCx1A0 arrived with Zen 4), so AMD defines no pipeline
// utilization for it and perf ships no top-down metrics for amdzen3; a level computed from other
// events would be a guess. What Zen 3 does count well is kept, with perf's amdzen3 formulas.
MetricTable Zen3Table() {
  MetricTable t;
  t.name = "zen3";
  t.title = "AMD Zen 3";
  t.source = "perf amdzen3 recommended metrics (no top-down levels: no dispatch-slot events)";
  t.no_levels_reason =
      "AMD Zen 3 has no dispatch-slot events (de_no_dispatch_per_slot, PMCx1A0, arrived with Zen "
      "4), so pipeline utilization (top-down levels 1 and 2) is not defined on it";
  t.events = {
      {"ls_not_halted_cyc", Amd(0x76, 0x00)},
      {"ex_ret_instr", Amd(0xc0, 0x00)},
      {"ex_ret_brn", Amd(0xc2, 0x00)},
      {"ex_ret_brn_misp", Amd(0xc3, 0x00)},
      {"ic_tag_hit_miss.instruction_cache_miss", Amd(0x18e, 0x18)},
      {"ic_tag_hit_miss.all_instruction_cache_accesses", Amd(0x18e, 0x1f)},
      {"op_cache_hit_miss.op_cache_miss", Amd(0x28f, 0x04)},
      {"op_cache_hit_miss.all_op_cache_accesses", Amd(0x28f, 0x07)},
  };
  t.metrics = {
      {"ipc", "ex_ret_instr / ls_not_halted_cyc", "instructions per cycle", {"IPC"}},
      {"branch_misprediction_ratio", "100 * ex_ret_brn_misp / ex_ret_brn", "%", {"Branch"}},
      {"branch_mpki", "1000 * ex_ret_brn_misp / ex_ret_instr", "per 1k instructions", {"Branch"}},
      {"ic_fetch_miss_ratio",
       "100 * ic_tag_hit_miss.instruction_cache_miss / "
       "ic_tag_hit_miss.all_instruction_cache_accesses",
       "%",
       {"Cache"}},
      {"op_cache_fetch_miss_ratio",
       "100 * op_cache_hit_miss.op_cache_miss / op_cache_hit_miss.all_op_cache_accesses",
       "%",
       {"Cache"}},
  };
  t.event_groups = {
      {"ls_not_halted_cyc", "ex_ret_instr", "ex_ret_brn", "ex_ret_brn_misp"},
      {"ic_tag_hit_miss.instruction_cache_miss", "ic_tag_hit_miss.all_instruction_cache_accesses",
       "op_cache_hit_miss.op_cache_miss", "op_cache_hit_miss.all_op_cache_accesses"},
  };
  t.x86_vendor = "AuthenticAMD";
  t.x86_family = 0x19;
  for (uint32_t m = 0x00; m <= 0x0f; ++m) t.x86_models.push_back(m);
  for (uint32_t m = 0x20; m <= 0x5f; ++m) t.x86_models.push_back(m);
  return t;
}

std::vector<MetricTable> AmdTables() {
  MetricTable zen4 = AmdTable("zen4", "AMD Zen 4", 6);
  zen4.x86_family = 0x19;
  for (uint32_t m = 0x10; m <= 0x1f; ++m) zen4.x86_models.push_back(m);
  for (uint32_t m = 0x60; m <= 0x7f; ++m) zen4.x86_models.push_back(m);
  for (uint32_t m = 0xa0; m <= 0xaf; ++m) zen4.x86_models.push_back(m);
  MetricTable zen5 = AmdTable("zen5", "AMD Zen 5", 8);
  zen5.x86_family = 0x1a;
  for (uint32_t m = 0x00; m <= 0x7f; ++m) zen5.x86_models.push_back(m);
  for (MetricTable* t : {&zen4, &zen5}) t->x86_vendor = "AuthenticAMD";
  return {Zen3Table(), zen4, zen5};
}

std::vector<MetricTable> MakeBuiltinTables() {
  std::vector<MetricTable> tables;
  MetricTable n1;
  n1.name = "neoverse-n1";
  n1.title = "Arm Neoverse N1";
  n1.source = "Arm telemetry specification: stage 1 is cycle accounting (N1 has no slot events)";
  n1.midr_implementer = 0x41;
  n1.midr_part = 0xd0c;
  n1.slots = 4;
  n1.events = ArmCommonEvents();
  n1.metrics = {
      {"frontend_stalled_cycles",
       "100 * STALL_FRONTEND / CPU_CYCLES",
       "%",
       {"l1", "Cycle_Accounting"}},
      {"backend_stalled_cycles",
       "100 * STALL_BACKEND / CPU_CYCLES",
       "%",
       {"l1", "Cycle_Accounting"}},
      {"ipc", "INST_RETIRED / CPU_CYCLES", "ratio", {"General"}},
  };
  n1.event_groups = {{"CPU_CYCLES", "STALL_FRONTEND", "STALL_BACKEND", "INST_RETIRED"}};
  n1.fixed_events = {"CPU_CYCLES"};
  tables.push_back(n1);

  // N2 revisions r0p0-r0p2 need the erratum correction; MIDR variant/revision byte 0x00-0x02.
  MetricTable n2 = ArmTable("neoverse-n2", "Arm Neoverse N2 r0p0-r0p2", 0xd49, 0x00, 0x02, 5, true);
  auto groups = NeoverseN2Groups(5);
  n2.metrics.insert(n2.metrics.end(), groups.begin(), groups.end());
  tables.push_back(n2);
  MetricTable n2r3 =
      ArmTable("neoverse-n2-r0p3", "Arm Neoverse N2 r0p3 and later", 0xd49, 0x03, 0xff, 5, false);
  n2r3.metrics.insert(n2r3.metrics.end(), groups.begin(), groups.end());
  tables.push_back(n2r3);
  tables.push_back(ArmTable("neoverse-v1", "Arm Neoverse V1", 0xd40, 0, 0xff, 8, false));
  tables.push_back(ArmTable("neoverse-v2", "Arm Neoverse V2", 0xd4f, 0, 0xff, 8, false));
  for (MetricTable t : IntelTables()) tables.push_back(std::move(t));
  for (MetricTable t : AmdTables()) tables.push_back(std::move(t));
  return tables;
}

}  // namespace

const MetricEvent* MetricTable::FindEvent(const std::string& event_name) const {
  const std::string lower = Lower(event_name);
  for (const MetricEvent& e : events)
    if (Lower(e.name) == lower) return &e;
  for (const MetricEvent& e : events)
    for (const std::string& alias : e.aliases)
      if (Lower(alias) == lower) return &e;
  return nullptr;
}

const MetricEvent* MetricTable::FindEventByCode(uint64_t code) const {
  for (const MetricEvent& e : events)
    if (e.code == code) return &e;
  return nullptr;
}

std::vector<std::string> MetricTable::GroupNames() const {
  std::vector<std::string> names;
  for (const Metric& m : metrics)
    for (const std::string& g : m.groups)
      if (std::find(names.begin(), names.end(), g) == names.end()) names.push_back(g);
  return names;
}

Result<std::vector<const Metric*>> MetricTable::Select(const std::string& selection) const {
  std::vector<const Metric*> selected;
  std::stringstream in(selection);
  std::string word;
  while (std::getline(in, word, ',')) {
    bool found = false;
    for (const Metric& m : metrics) {
      bool match = Lower(m.name) == Lower(word);
      for (const std::string& g : m.groups) match |= Lower(g) == Lower(word);
      if (match) {
        found = true;
        if (std::find(selected.begin(), selected.end(), &m) == selected.end())
          selected.push_back(&m);
      }
    }
    if (!found && !no_levels_reason.empty() && (Lower(word) == "l1" || Lower(word) == "l2"))
      return Error(no_levels_reason + "; metric groups for " + name + ": " + [&] {
        std::string known;
        for (const std::string& g : GroupNames()) known += (known.empty() ? "" : ", ") + g;
        return known;
      }());
    if (!found) {
      std::string known;
      for (const std::string& g : GroupNames()) known += (known.empty() ? "" : ", ") + g;
      return Error("no metric or metric group '" + word + "' for " + name + " (groups: " + known +
                   ")");
    }
  }
  if (selected.empty()) return Error("no metrics selected");
  return selected;
}

const std::vector<MetricTable>& BuiltinMetricTables() {
  static const std::vector<MetricTable> tables = MakeBuiltinTables();
  return tables;
}

Result<const MetricTable*> FindMetricTable(const std::string& key,
                                           const std::vector<MetricTable>& tables) {
  std::string k = Lower(key);
  if (k.rfind("0x", 0) == 0) {
    uint64_t midr = std::strtoull(k.c_str(), nullptr, 16);
    uint32_t implementer = static_cast<uint32_t>((midr >> 24) & 0xff);
    uint32_t part = static_cast<uint32_t>((midr >> 4) & 0xfff);
    uint32_t revision = static_cast<uint32_t>(((midr >> 20) & 0xf) << 4 | (midr & 0xf));
    for (const MetricTable& t : tables)
      if (t.midr_implementer == implementer && t.midr_part == part && revision >= t.min_revision &&
          revision <= t.max_revision)
        return &t;
    return Error("no metric table for MIDR " + key + " (implementer 0x" +
                 (std::stringstream() << std::hex << implementer).str() + ", part 0x" +
                 (std::stringstream() << std::hex << part).str() + "); see 'tprof list cpus'");
  }
  for (const MetricTable& t : tables)
    if (t.name == k || t.name == "neoverse-" + k) return &t;
  return Error("unknown CPU '" + key + "'; see 'tprof list cpus'");
}

Result<const MetricTable*> TableForCpu(const CpuDescription& cpu,
                                       const std::vector<MetricTable>& tables) {
  if (cpu.midr) {
    char midr[32];
    std::snprintf(midr, sizeof midr, "0x%llx", static_cast<unsigned long long>(cpu.midr));
    return FindMetricTable(midr, tables);
  }
  for (const MetricTable& t : tables)
    if (!t.x86_vendor.empty() && t.x86_vendor == cpu.vendor && t.x86_family == cpu.family &&
        std::find(t.x86_models.begin(), t.x86_models.end(), cpu.model) != t.x86_models.end())
      return &t;
  return Error("no metric table for this CPU (" +
               (cpu.model_name.empty() ? cpu.vendor : cpu.model_name) + ", family " +
               std::to_string(cpu.family) + " model " + std::to_string(cpu.model) +
               "); name one with --cpu (see 'tprof list cpus')");
}

Result<MetricTable> LoadArmTelemetrySpec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error("cannot read " + path);
  auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Error(path + ": not a JSON document");
  MetricTable t;
  try {
    const auto& product = json.at("product_configuration");
    t.title = product.at("product_name").get<std::string>() + " r" +
              product.value("major_revision", "0") + "p" + product.value("minor_revision", "0");
    t.name = Lower(product.at("product_name").get<std::string>());
    std::replace(t.name.begin(), t.name.end(), ' ', '-');
    t.slots = product.value("num_slots", 0u);
    t.midr_implementer =
        static_cast<uint32_t>(std::stoul(product.value("implementer", "0x41"), nullptr, 16));
    t.midr_part =
        static_cast<uint32_t>(std::stoul(product.at("part_num").get<std::string>(), nullptr, 16));
    t.source = path;
    for (const auto& [name, event] : json.at("events").items())
      t.events.push_back({name, std::stoull(event.at("code").get<std::string>(), nullptr, 16)});
    for (const auto& [name, metric] : json.at("metrics").items()) {
      Metric m;
      m.name = name;
      m.formula = metric.at("formula").get<std::string>();
      std::string units = metric.value("units", "");
      m.unit = units.rfind("percent", 0) == 0 ? "%" : units;
      t.metrics.push_back(std::move(m));
    }
    auto add_group = [&](const std::string& metric, const std::string& group) {
      for (Metric& m : t.metrics)
        if (m.name == metric) m.groups.push_back(group);
    };
    for (const auto& [group, body] : json.at("groups").at("metrics").items())
      for (const auto& metric : body.at("metrics")) add_group(metric.get<std::string>(), group);
    const auto& stage1 =
        json.at("methodologies").at("topdown_methodology").at("metric_grouping").at("stage_1");
    for (const auto& group : stage1)
      for (const auto& [g, body] : json.at("groups").at("metrics").items())
        if (g == group.get<std::string>())
          for (const auto& metric : body.at("metrics")) add_group(metric.get<std::string>(), "l1");
  } catch (const std::exception& e) {
    return Error(path + ": not an Arm telemetry specification (" + e.what() + ")");
  }
  return t;
}

}  // namespace tprof
