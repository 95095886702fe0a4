// A shared library opened when first needed rather than linked. For dependencies only some
// commands use: the dynamic loader relocates every linked library before main, and libraries
// with large pointer tables (capstone, libpfm4: some 120,000 relocations between them) cost
// every command over a millisecond at start for nothing.
#pragma once

#include <string>
#include <utility>

#include "core/base/error.h"

namespace tprof {

class SharedLibrary {
 public:
  // dlopen by soname ("libcapstone.so.4"); the library stays loaded for the process.
  static Result<SharedLibrary> Open(const std::string& soname);

  // The address of `name`, as the function pointer type F.
  template <typename F>
  Result<F> Function(const char* name) const {
    auto address = Address(name);
    if (!address.ok()) return address.error();
    return reinterpret_cast<F>(*address);
  }
  // Sets `*function` to the address of `name`.
  template <typename F>
  Status Bind(const char* name, F* function) const {
    auto found = Function<F>(name);
    if (!found.ok()) return found.error();
    *function = *found;
    return Status::Ok();
  }

 private:
  SharedLibrary(void* handle, std::string soname) : handle_(handle), soname_(std::move(soname)) {}
  Result<void*> Address(const char* name) const;

  void* handle_;
  std::string soname_;
};

}  // namespace tprof
