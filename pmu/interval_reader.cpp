#include "pmu/interval_reader.h"

namespace tprof {

Result<RawCounts> IntervalReader::Next() {
  auto now = session_->ReadRaw();
  if (!now.ok()) return now.error();
  RawCounts delta = Subtract(now.value(), previous_);
  previous_ = std::move(now).value();
  return delta;
}

Result<CounterReport> IntervalReader::NextReport() {
  auto delta = Next();
  if (!delta.ok()) return delta.error();
  return session_->ToReport(delta.value());
}

}  // namespace tprof
