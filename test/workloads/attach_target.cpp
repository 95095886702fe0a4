// A running process to attach to with known page-fault counts. It starts THREADS - 1 worker
// threads, prints "ready" once they all exist, and waits for a byte on stdin. Then every thread,
// and one more thread started only then (which attached counters follow by inheritance), faults
// in PAGES fresh pages of its own, one minor fault each (no transparent huge pages), and the
// process exits.
//   attach_target THREADS PAGES
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Faults in `pages` fresh pages, one minor fault each.
void TouchPages(long pages) {
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = static_cast<size_t>(pages * page);
  auto* memory = static_cast<char*>(
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (memory == MAP_FAILED) std::exit(1);
  madvise(memory, bytes, MADV_NOHUGEPAGE);
  for (long i = 0; i < pages; ++i) memory[i * page] = 1;
  munmap(memory, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int threads = std::atoi(argv[1]);
  const long pages = std::atol(argv[2]);
  int go[2];
  if (pipe(go) != 0) return 1;
  std::vector<std::thread> workers;
  // The workers wait on a pipe the main thread writes once it has read stdin.
  for (int t = 1; t < threads; ++t)
    workers.emplace_back([&] {
      char c;
      if (read(go[0], &c, 1) != 1) std::exit(1);
      TouchPages(pages);
    });
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  if (read(0, &c, 1) < 0) return 1;
  for (int t = 1; t < threads; ++t)
    if (write(go[1], "g", 1) != 1) return 1;
  std::thread late([&] { TouchPages(pages); });
  TouchPages(pages);
  late.join();
  for (std::thread& w : workers) w.join();
  return 0;
}
