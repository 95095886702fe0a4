// Parsing of event names given with -e into what perf_event_open needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace tprof {

struct EventSpec {
  std::string name;  // as the user wrote it, modifiers included
  uint32_t type = 0;
  uint64_t config = 0;
  bool exclude_user = false;
  bool exclude_kernel = false;
  uint32_t precise_ip = 0;
  bool is_hardware() const;
};

// Parses one event name with optional modifiers (":u", ":k", ":p"...).
Result<EventSpec> ParseEventSpec(const std::string& text);
// Parses a comma-separated list.
Result<std::vector<EventSpec>> ParseEventList(const std::string& text);

// Every generic event name tprof knows, for help texts and suggestions.
std::vector<std::string> KnownEventNames();

// The closest candidate to `word` by edit distance, or "" when none is close.
std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tprof
