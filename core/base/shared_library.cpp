#include "core/base/shared_library.h"

#include <dlfcn.h>

namespace tprof {

Result<SharedLibrary> SharedLibrary::Open(const std::string& soname) {
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    return Error("cannot load " + soname + ": " + (why ? why : "unknown error"));
  }
  return SharedLibrary(handle, soname);
}

Result<void*> SharedLibrary::Address(const char* name) const {
  ::dlerror();
  void* address = ::dlsym(handle_, name);
  if (!address) return Error(soname_ + " has no " + name);
  return address;
}

}  // namespace tprof
