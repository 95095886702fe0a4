// The event a view is about, picked by the name the user gave (`--event`, a gate threshold's
// `.event`): one rule and one message for every command, so that the same mistake reads and exits
// the same way in the table, the folded stacks, the flame graphs, the streams and the gate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

// The index of the event called `wanted`: the exact name first, else the one whose name without
// modifiers is `wanted` ("cycles" picks "cycles:u"); nullopt when none is.
std::optional<size_t> FindEventNamed(const std::vector<std::string>& names,
                                     std::string_view wanted);

// As FindEventNamed, or a BadRequest "no event 'X' (it has: a, b)" that the caller gives the
// context of (the file, the side of a diff, the threshold).
Result<size_t> SelectEvent(const std::vector<std::string>& names, std::string_view wanted);
Result<size_t> SelectEvent(const std::vector<EventDesc>& events, std::string_view wanted);

std::vector<std::string> EventNames(const std::vector<EventDesc>& events);
// "a, b, c": the events a message lists.
std::string EventNameList(const std::vector<std::string>& names);
std::string EventNameList(const std::vector<EventDesc>& events);

}  // namespace tprof
