// A table that one thread appends to while others read what was appended before (the entries it
// published): entries never move, so a reader's reference stays good. Used where a source names
// frames while it replays, and visitors on other threads resolve the frames of the samples they
// were handed (NamedFrameTable).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

namespace tprof {

template <typename T>
class AppendOnlyTable {
 public:
  // 2^12 entries a chunk, up to 2^16 chunks: 268M entries, a directory of 512 KiB.
  static constexpr size_t kChunkBits = 12;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kMaxChunks = size_t{1} << 16;
  static constexpr size_t kCapacity = kChunkSize * kMaxChunks;

  AppendOnlyTable() : chunks_(new std::atomic<T*>[kMaxChunks]) {
    for (size_t c = 0; c < kMaxChunks; ++c) chunks_[c].store(nullptr, std::memory_order_relaxed);
  }
  AppendOnlyTable(const AppendOnlyTable&) = delete;
  AppendOnlyTable& operator=(const AppendOnlyTable&) = delete;
  // Moved only while no other thread reads it.
  AppendOnlyTable(AppendOnlyTable&& other) noexcept : AppendOnlyTable() { Swap(other); }
  AppendOnlyTable& operator=(AppendOnlyTable&& other) noexcept {
    Swap(other);
    return *this;
  }
  ~AppendOnlyTable() {
    if (!chunks_) return;
    for (size_t c = 0; c < kMaxChunks; ++c) delete[] chunks_[c].load(std::memory_order_relaxed);
  }

  // The entries published so far.
  size_t size() const { return size_.load(std::memory_order_acquire); }
  const T& operator[](size_t i) const {
    return chunks_[i >> kChunkBits].load(std::memory_order_acquire)[i & (kChunkSize - 1)];
  }

  // Appends and publishes one entry (the appending thread only). False when full.
  bool push_back(T value) {
    const size_t i = size_.load(std::memory_order_relaxed);
    if (i >= kCapacity) return false;
    T* chunk = chunks_[i >> kChunkBits].load(std::memory_order_relaxed);
    if (!chunk) {
      chunk = new T[kChunkSize];
      chunks_[i >> kChunkBits].store(chunk, std::memory_order_release);
    }
    chunk[i & (kChunkSize - 1)] = std::move(value);
    size_.store(i + 1, std::memory_order_release);
    return true;
  }

 private:
  void Swap(AppendOnlyTable& other) {
    chunks_.swap(other.chunks_);
    const size_t size = size_.load(std::memory_order_relaxed);
    size_.store(other.size_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    other.size_.store(size, std::memory_order_relaxed);
  }
  std::unique_ptr<std::atomic<T*>[]> chunks_;
  std::atomic<size_t> size_{0};
};

}  // namespace tprof
