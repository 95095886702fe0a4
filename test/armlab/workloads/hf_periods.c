// The arm lab's independent look at hf_sample_period (no tprof code): samples its own loop with a
// {cycles:u, instructions:u} group whose leader alternates a long and a short period, and prints
// every sample's period and the group's counts, for the host to hold against what was asked.
//   hf_periods LONG SHORT RAND_BITS LOOPS
//     prints "sample PERIOD CYCLES INSTRUCTIONS" per sample, then "lost N" and "throttled N"
//   hf_periods --refusals
//     prints "refusal NAME ERRNO" for attributes the series' kernel must refuse, and
//     "accepted NAME 0" for the one it must take
// An attribute of 144 bytes: the kernel headers of this distribution stop at config3 (136), so
// the series' u64 after it (hf_sample_period bits 0-31, hf_sample_rand bits 32-35) is written
// by offset, as tprof does.
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kAttrSize = 144, kHfOffset = 136, kDataPages = 256 };

static volatile uint64_t g_sink;

static int Open(const struct perf_event_attr* base, uint64_t hf, int group_fd) {
  unsigned char bytes[kAttrSize];
  memset(bytes, 0, sizeof bytes);
  memcpy(bytes, base, sizeof *base);
  uint32_t size = kAttrSize;
  memcpy(bytes + offsetof(struct perf_event_attr, size), &size, sizeof size);
  memcpy(bytes + kHfOffset, &hf, sizeof hf);
  return (int)syscall(SYS_perf_event_open, bytes, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static struct perf_event_attr Cycles(uint64_t period) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.sample_period = period;
  attr.sample_type = PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ;
  attr.read_format = PERF_FORMAT_GROUP;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  return attr;
}

static uint64_t Hf(uint64_t period, uint64_t rand_bits) { return period | (rand_bits << 32); }

static void Refusal(const char* name, const struct perf_event_attr* attr, uint64_t hf) {
  int fd = Open(attr, hf, -1);
  int err = fd < 0 ? errno : 0;
  printf("%s %s %d\n", fd < 0 ? "refusal" : "accepted", name, err);
  if (fd >= 0) close(fd);
}

static int Refusals(void) {
  struct perf_event_attr a = Cycles(100000);
  Refusal("hf_equal_to_period", &a, Hf(100000, 0));
  Refusal("rand_without_hf", &a, Hf(0, 4));
  Refusal("reserved_bits", &a, Hf(1000, 0) | (1ULL << 40));
  struct perf_event_attr freq = Cycles(1000);
  freq.freq = 1;
  Refusal("hf_with_frequency", &freq, Hf(100, 0));
  struct perf_event_attr software = Cycles(100000);
  software.type = PERF_TYPE_SOFTWARE;
  software.config = PERF_COUNT_SW_TASK_CLOCK;
  Refusal("hf_on_a_software_event", &software, Hf(1000, 0));
  Refusal("hf_on_cycles", &a, Hf(1000, 3));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--refusals") == 0) return Refusals();
  if (argc != 5) {
    fprintf(stderr, "usage: hf_periods LONG SHORT RAND_BITS LOOPS | hf_periods --refusals\n");
    return 2;
  }
  uint64_t long_period = strtoull(argv[1], NULL, 0), short_period = strtoull(argv[2], NULL, 0);
  uint64_t rand_bits = strtoull(argv[3], NULL, 0), loops = strtoull(argv[4], NULL, 0);
  struct perf_event_attr leader = Cycles(long_period);
  int fd = Open(&leader, Hf(short_period, rand_bits), -1);
  if (fd < 0) {
    printf("open-error %d %s\n", errno, strerror(errno));
    return 1;
  }
  struct perf_event_attr member;
  memset(&member, 0, sizeof member);
  member.size = sizeof member;
  member.type = PERF_TYPE_HARDWARE;
  member.config = PERF_COUNT_HW_INSTRUCTIONS;
  member.exclude_kernel = 1;
  member.exclude_hv = 1;
  int member_fd = (int)syscall(SYS_perf_event_open, &member, 0, -1, fd, PERF_FLAG_FD_CLOEXEC);
  if (member_fd < 0) {
    printf("open-error %d %s\n", errno, strerror(errno));
    return 1;
  }
  long page = sysconf(_SC_PAGESIZE);
  size_t length = (size_t)page * (1 + kDataPages);
  void* ring = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (ring == MAP_FAILED) {
    printf("mmap-error %d\n", errno);
    return 1;
  }
  ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  uint64_t x = 1;
  for (uint64_t i = 0; i < loops; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  g_sink = x;
  ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);

  struct perf_event_mmap_page* meta = ring;
  const unsigned char* data = (const unsigned char*)ring + page;
  uint64_t size = (uint64_t)page * kDataPages, head = meta->data_head, lost = 0, throttled = 0;
  __sync_synchronize();
  if (head > size) {
    printf("overrun %llu\n", (unsigned long long)head);
    return 1;
  }
  for (uint64_t at = 0; at < head;) {
    struct perf_event_header h;
    memcpy(&h, data + at, sizeof h);
    if (h.size == 0) break;
    if (h.type == PERF_RECORD_SAMPLE) {
      uint64_t fields[4];  // period, nr, cycles, instructions
      memcpy(fields, data + at + sizeof h, sizeof fields);
      printf("sample %llu %llu %llu\n", (unsigned long long)fields[0],
             (unsigned long long)fields[2], (unsigned long long)fields[3]);
    } else if (h.type == PERF_RECORD_LOST) {
      uint64_t fields[2];
      memcpy(fields, data + at + sizeof h, sizeof fields);
      lost += fields[1];
    } else if (h.type == PERF_RECORD_THROTTLE) {
      ++throttled;
    }
    at += h.size;
  }
  printf("lost %llu\nthrottled %llu\n", (unsigned long long)lost, (unsigned long long)throttled);
  return 0;
}
