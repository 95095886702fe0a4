// Function totals of a profile written as folded stacks ("main;f 10\n"), for the diff and gate
// tests: the shape of input `tprof diff` compares, without a recording.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/analysis/function_profile.h"
#include "core/source/profile_source.h"

namespace tprof {

inline FunctionTotals TotalsOf(const std::string& folded) {
  auto source = ProfileSource::OpenBytes(folded);
  EXPECT_TRUE(source.ok()) << source.error().message();
  FunctionProfileBuilder builder((*source)->events(), *(*source)->embedded_frames());
  auto summary = (*source)->ReadRecords(builder);
  EXPECT_TRUE(summary.ok());
  return SumByFunction(builder.Finish());
}

// Old: alpha 300, beta 200, gamma 100, main 50 (self), total 650.
inline const char* const kFourFunctionsOld =
    "main;alpha 300\nmain;beta 200\nmain;gamma 100\nmain 50\n";

}  // namespace tprof
