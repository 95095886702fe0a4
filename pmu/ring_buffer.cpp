#include "pmu/ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tprof {

Result<RingBuffer> RingBuffer::Map(int fd, size_t data_pages) {
  if (data_pages == 0 || (data_pages & (data_pages - 1)) != 0)
    return Error("ring buffer size must be a power of two pages, not " +
                 std::to_string(data_pages));
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t size = (data_pages + 1) * page;
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int err = errno;
    std::string message = std::string("cannot map the ring buffer (") + std::strerror(err) + ")";
    if (err == EPERM || err == ENOMEM) message += "; lower -m or raise kernel.perf_event_mlock_kb";
    return Error(message);
  }
  return RingBuffer(base, size, data_pages * page);
}

RingBuffer::RingBuffer(RingBuffer&& other) noexcept
    : base_(other.base_), mapped_size_(other.mapped_size_), data_size_(other.data_size_) {
  other.base_ = nullptr;
}

RingBuffer::~RingBuffer() {
  if (base_) ::munmap(base_, mapped_size_);
}

size_t RingBuffer::Drain(
    const std::function<void(const perf_event_header&, const uint8_t*)>& callback) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const uint8_t* data = static_cast<const uint8_t*>(base_) + meta->data_offset;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  const uint64_t start = tail;
  const uint64_t mask = data_size_ - 1;
  while (tail + sizeof(perf_event_header) <= head) {
    perf_event_header header;
    uint64_t offset = tail & mask;
    if (offset + sizeof(header) <= data_size_) {
      std::memcpy(&header, data + offset, sizeof(header));
    } else {
      size_t first = data_size_ - offset;
      std::memcpy(&header, data + offset, first);
      std::memcpy(reinterpret_cast<uint8_t*>(&header) + first, data, sizeof(header) - first);
    }
    if (header.size < sizeof(header) || tail + header.size > head) break;  // kernel bug guard
    const uint8_t* record = data + offset;
    if (offset + header.size > data_size_) {
      wrap_buffer_.resize(header.size);
      size_t first = data_size_ - offset;
      std::memcpy(wrap_buffer_.data(), data + offset, first);
      std::memcpy(wrap_buffer_.data() + first, data, header.size - first);
      record = reinterpret_cast<const uint8_t*>(wrap_buffer_.data());
    }
    callback(header, record);
    tail += header.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  return static_cast<size_t>(tail - start);
}

}  // namespace tprof
