// The vdso that this process has mapped: the same image every process on this kernel maps, so
// the symbolizer and the unwinder read a recorded process's vdso frames from it.
#pragma once

#include <string_view>

namespace tprof {

// The image (ELF header to the end of the section headers); empty when the kernel maps none or
// it is not a 64-bit ELF.
std::string_view RunningVdsoImage();

}  // namespace tprof
