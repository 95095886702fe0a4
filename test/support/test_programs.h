// What the test programs share: the paths of the programs and data test/CMakeLists.txt gives
// each test target, and scratch paths. One definition each, so that a target's sources can be
// compiled together (unity builds, TPROF_UNITY).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace tprof {

#ifdef TPROF_BINARY
inline const std::string kTprof = TPROF_BINARY;
#endif
#ifdef DEMO_BINARY
inline const std::string kDemo = DEMO_BINARY;
#endif
#ifdef FAULT_SWITCH_BINARY
inline const std::string kFaultSwitch = FAULT_SWITCH_BINARY;
#endif
#ifdef TPROF_TESTDATA_DIR
inline const std::string kTestdata = TPROF_TESTDATA_DIR;
#endif
// The reference implementation the tests compare with (scripts/setup.sh installs it).
inline const std::string kPerf = "/usr/bin/perf";

// A path in gtest's temporary directory that no other test process uses: `tag` says which
// test file wrote it. Without a "//" (recorded paths have none, and some tests compare them).
inline std::string TempPath(const std::string& tag, const std::string& name) {
  std::string dir = ::testing::TempDir();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir + "/tprof_" + tag + "_" + std::to_string(::getpid()) + "_" + name;
}

inline int Lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// The text's lines, without their newlines.
inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether AddressSanitizer is built in (GCC says so by a macro, clang by __has_feature).
constexpr bool kUnderAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

}  // namespace tprof
