#include "core/model/function_name.h"

namespace tprof {

std::string WithoutParameters(const std::string& name) {
  size_t end = name.size();
  if (end > 6 && name.compare(end - 6, 6, " const") == 0) end -= 6;
  if (end == 0 || name[end - 1] != ')') return name.substr(0, end);
  // The parameter list is the parenthesis that closes last; its own parentheses nest
  // (function pointer parameters).
  int depth = 0;
  for (size_t i = end; i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return name.substr(0, i > 0 ? i : end);
  }
  return name.substr(0, end);
}

}  // namespace tprof
