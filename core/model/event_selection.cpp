#include "core/model/event_selection.h"

namespace tprof {

std::optional<size_t> FindEventNamed(const std::vector<std::string>& names,
                                     std::string_view wanted) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == wanted) return i;
  for (size_t i = 0; i < names.size(); ++i)
    if (std::string_view(names[i]).substr(0, names[i].find(':')) == wanted) return i;
  return std::nullopt;
}

Result<size_t> SelectEvent(const std::vector<std::string>& names, std::string_view wanted) {
  if (auto found = FindEventNamed(names, wanted)) return *found;
  return Error::BadRequest("no event '" + std::string(wanted) + "' (it has: " +
                           (names.empty() ? std::string("no events") : EventNameList(names)) + ")");
}

Result<size_t> SelectEvent(const std::vector<EventDesc>& events, std::string_view wanted) {
  return SelectEvent(EventNames(events), wanted);
}

std::vector<std::string> EventNames(const std::vector<EventDesc>& events) {
  std::vector<std::string> names;
  names.reserve(events.size());
  for (const EventDesc& event : events) names.push_back(event.name);
  return names;
}

std::string EventNameList(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

std::string EventNameList(const std::vector<EventDesc>& events) {
  return EventNameList(EventNames(events));
}

}  // namespace tprof
