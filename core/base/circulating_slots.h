// A few slots circulating between one producing thread and one worker thread: the producer
// fills a free slot and hands it over; the worker handles the slots in the order they were
// handed over and frees them for reuse. When the worker falls behind, the producer waits for
// a slot to come back, so memory stays bounded whatever the length of the stream, and a slot's
// buffers are reused rather than allocated anew.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tprof {

template <typename Slot>
class CirculatingSlots {
 public:
  // `handle` runs on the worker thread, one slot at a time; what it touches of its owner must
  // be set up before this is constructed (declare this after it) and outlive Finish.
  CirculatingSlots(size_t slots, std::function<void(Slot&)> handle)
      : handle_(std::move(handle)), slots_(slots < 2 ? 2 : slots) {
    for (Slot& s : slots_) free_.push_back(&s);
    thread_ = std::thread([this] { Work(); });
  }
  CirculatingSlots(const CirculatingSlots&) = delete;
  CirculatingSlots& operator=(const CirculatingSlots&) = delete;
  ~CirculatingSlots() { Finish(); }

  // The slot being filled: the one taken before, else a free one (waiting for one), the one
  // freed last: its memory is the likeliest to be in the cache, and slots that were never
  // needed (the worker never fell that far behind) are never touched, nor their memory made.
  Slot& Filling() {
    if (!filling_) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return !free_.empty(); });
      filling_ = free_.back();
      free_.pop_back();
    }
    return *filling_;
  }
  bool filling() const { return filling_ != nullptr; }

  // Queues the slot being filled, if there is one, for the worker.
  void HandOver() {
    if (!filling_) return;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::exchange(filling_, nullptr));
    }
    changed_.notify_all();
  }

  // Waits until every slot handed over has been handled; a slot still being filled is not
  // handled. Idempotent; nothing may be handed over after.
  void Finish() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      if (filling_) free_.push_back(std::exchange(filling_, nullptr));
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

 private:
  void Work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return done_ || !queue_.empty(); });
      if (queue_.empty()) return;  // done, and nothing left
      Slot* slot = queue_.front();
      queue_.pop_front();
      lock.unlock();
      handle_(*slot);
      lock.lock();
      free_.push_back(slot);
      changed_.notify_all();
    }
  }

  std::function<void(Slot&)> handle_;
  std::vector<Slot> slots_;
  Slot* filling_ = nullptr;  // the producer's; not shared
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot*> free_;  // guarded by mutex_; the one freed last is taken first
  std::deque<Slot*> queue_;  // guarded by mutex_
  bool done_ = false;        // guarded by mutex_
  std::thread thread_;
};

}  // namespace tprof
