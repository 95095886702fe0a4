#include "report/event_units.h"

#include <cmath>

#include "report/printf.h"

namespace tprof {

ValueScale ScaleForEvent(std::string_view event_name, double largest) {
  if (UnitOfEvent(event_name) == EventUnit::kCount) return {1, 0, std::string(event_name)};
  if (std::fabs(largest) < 100e9) return {1e6, 3, "ms"};
  return {1e9, 3, "s"};
}

std::string FormatScaled(const ValueScale& scale, double value, bool sign) {
  const double shown = value / scale.divisor;
  return sign ? Printf("%+.*f", scale.decimals, shown) : Printf("%.*f", scale.decimals, shown);
}

}  // namespace tprof
