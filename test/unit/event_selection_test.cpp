#include "core/model/event_selection.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

std::vector<EventDesc> Events(std::initializer_list<const char*> names) {
  std::vector<EventDesc> events;
  for (const char* name : names) {
    EventDesc event;
    event.name = name;
    events.push_back(event);
  }
  return events;
}

TEST(EventSelection, ExactNameFirstThenTheNameWithoutModifiers) {
  const auto events = Events({"cycles:u", "instructions", "cycles"});
  EXPECT_EQ(SelectEvent(events, "cycles").value(), 2u);  // the exact name wins over "cycles:u"
  EXPECT_EQ(SelectEvent(events, "cycles:u").value(), 0u);
  EXPECT_EQ(SelectEvent(Events({"cycles:u", "instructions:u"}), "instructions").value(), 1u);
  EXPECT_FALSE(SelectEvent(events, "cycle").ok());
  EXPECT_FALSE(SelectEvent(events, "").ok());
}

TEST(EventSelection, AMissingEventIsABadRequestThatListsTheEvents) {
  auto missing = SelectEvent(Events({"task-clock", "page-faults"}), "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(missing.error().message(), "no event 'nope' (it has: task-clock, page-faults)");
  auto none = SelectEvent(std::vector<std::string>{}, "cycles");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message(), "no event 'cycles' (it has: no events)");
  auto found = SelectEvent(std::vector<std::string>{"a", "b"}, "b");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, 1u);
}

}  // namespace
}  // namespace tprof
