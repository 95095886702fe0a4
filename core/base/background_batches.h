// Hands items to one background thread in batches, so work that may block (opening binaries,
// inflating DWARF) overlaps with the thread producing the items. Items are handled in the order
// they were added, by one thread, so the handler needs no locking of its own.
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

template <typename T>
class BackgroundBatches {
 public:
  using Handler = std::function<void(std::vector<T>& batch)>;

  // Batches of `batch_size` keep the hand-over (a lock and a wake-up) rare next to the work.
  explicit BackgroundBatches(Handler handle, size_t batch_size = 256)
      : handle_(std::move(handle)), batch_size_(batch_size) {
    thread_ = std::thread([this] { Work(); });
  }
  BackgroundBatches(const BackgroundBatches&) = delete;
  BackgroundBatches& operator=(const BackgroundBatches&) = delete;
  ~BackgroundBatches() { Finish(); }

  void Add(T item) {
    filling_.push_back(std::move(item));
    if (filling_.size() >= batch_size_) HandOver();
  }

  // Hands over what is left and waits until every item has been handled. Idempotent.
  void Finish() {
    if (!thread_.joinable()) return;
    HandOver();
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }

 private:
  void HandOver() {
    if (filling_.empty()) return;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(filling_));
    }
    filling_.clear();
    filling_.reserve(batch_size_);
    ready_.notify_one();
  }

  void Work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return done_ || !queue_.empty(); });
      if (queue_.empty()) return;  // done, and nothing left
      std::vector<T> batch = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      handle_(batch);
      lock.lock();
    }
  }

  Handler handle_;
  const size_t batch_size_;
  std::vector<T> filling_;  // the producer's; not shared
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::vector<T>> queue_;  // guarded by mutex_
  bool done_ = false;                 // guarded by mutex_
  std::thread thread_;
};

}  // namespace tprof
