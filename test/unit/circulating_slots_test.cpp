// The hand-over shared by the reader's threads (BackgroundReplay, ChunkDecodeThread): slots are
// handled in order on one other thread, no more than the given number exist, a producer that
// gets ahead of the worker waits for a slot instead of growing a queue, and one that does not
// reuses the same few.
#include "core/base/circulating_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

namespace tprof {
namespace {

struct Slot {
  std::vector<int> values;
};

TEST(CirculatingSlots, HandlesEverySlotInOrderOnOneOtherThroughFewSlots) {
  std::vector<int> seen;
  std::set<const Slot*> slots_used;
  std::set<std::thread::id> threads;
  {
    CirculatingSlots<Slot> slots(3, [&](Slot& slot) {
      seen.insert(seen.end(), slot.values.begin(), slot.values.end());
      slots_used.insert(&slot);
      threads.insert(std::this_thread::get_id());
      slot.values.clear();
    });
    for (int i = 0; i < 1000; ++i) {
      slots.Filling().values.push_back(i);
      if (i % 7 == 6) slots.HandOver();
    }
    slots.HandOver();
    slots.Finish();
    slots.Finish();  // idempotent
  }
  std::vector<int> expected(1000);
  for (int i = 0; i < 1000; ++i) expected[i] = i;
  EXPECT_EQ(seen, expected);
  EXPECT_LE(slots_used.size(), 3u);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
}

// A worker that keeps up needs few slots, and the producer reuses those: the one freed last is
// filled next. Waiting until each slot is handled, the producer finds the one before it back
// (the worker frees a slot before it handles the next), so at most three of sixteen are ever
// filled; taken in turn, all sixteen would be, and their memory made for nothing.
TEST(CirculatingSlots, AWorkerThatKeepsUpLeavesTheOtherSlotsUntouched) {
  std::set<const Slot*> filled;
  std::atomic<int> handled{0};
  CirculatingSlots<Slot> slots(16, [&](Slot&) { ++handled; });
  for (int i = 0; i < 200; ++i) {
    Slot& slot = slots.Filling();
    filled.insert(&slot);
    slot.values = {i};
    slots.HandOver();
    while (handled <= i) std::this_thread::yield();
  }
  slots.Finish();
  EXPECT_EQ(handled, 200);
  EXPECT_LE(filled.size(), 3u);
}

TEST(CirculatingSlots, AProducerAheadOfTheWorkerWaitsForASlot) {
  std::atomic<bool> release{false};
  std::atomic<int> handled{0};
  CirculatingSlots<Slot> slots(2, [&](Slot&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++handled;
  });
  std::atomic<bool> third_taken{false};
  std::thread producer([&] {
    for (int i = 0; i < 3; ++i) {
      slots.Filling().values = {i};
      if (i == 2) third_taken = true;
      slots.HandOver();
    }
  });
  // Both slots are handed over and the worker holds one of them: the third must wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(third_taken);
  release = true;
  producer.join();
  EXPECT_TRUE(third_taken);
  slots.Finish();
  EXPECT_EQ(handled, 3);
}

TEST(CirculatingSlots, ASlotStillBeingFilledIsNotHandledButQueuedOnesAre) {
  std::vector<int> seen;
  {
    CirculatingSlots<Slot> slots(2, [&](Slot& slot) {
      seen.insert(seen.end(), slot.values.begin(), slot.values.end());
      slot.values.clear();
    });
    slots.Filling().values = {1};
    slots.HandOver();
    slots.Filling().values = {2};  // never handed over
  }                                // destroyed without Finish
  EXPECT_EQ(seen, std::vector<int>{1});
}

}  // namespace
}  // namespace tprof
