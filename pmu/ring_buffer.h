// One perf event ring buffer mapped into memory: the kernel writes records at data_head, we read
// from data_tail and publish how far we got.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/base/error.h"

namespace tprof {

class RingBuffer {
 public:
  // Maps 1 + data_pages pages (data_pages a power of two) of the event's buffer.
  static Result<RingBuffer> Map(int fd, size_t data_pages);
  RingBuffer(RingBuffer&& other) noexcept;
  RingBuffer& operator=(RingBuffer&&) = delete;
  RingBuffer(const RingBuffer&) = delete;
  ~RingBuffer();

  // Calls `callback(header, record_bytes)` for every complete record available now, in order.
  // A record that wraps around the end of the buffer is copied to be contiguous.
  // Returns the number of bytes consumed.
  size_t Drain(const std::function<void(const perf_event_header&, const uint8_t*)>& callback);

  size_t data_size() const { return data_size_; }

 private:
  RingBuffer(void* base, size_t mapped_size, size_t data_size)
      : base_(base), mapped_size_(mapped_size), data_size_(data_size) {}

  void* base_;
  size_t mapped_size_;
  size_t data_size_;
  std::string wrap_buffer_;
};

}  // namespace tprof
