#include "views/sample_selecting_source.h"

namespace tprof {

std::optional<std::string> RowFilterMisuse(const SampleFilter& filter, const std::string& view) {
  if (filter.dsos.empty() && filter.symbol_pattern.empty()) return std::nullopt;
  const std::string option = !filter.dsos.empty() ? "--dso" : "--symbol";
  if (view == "--timeline")
    return option +
           " chooses rows of the table; --timeline shows every function (filter it by "
           "--comm, --pid, --tid or --time)";
  return option + " chooses rows of the table; " + view +
         " shows whole stacks (filter them by --comm, --pid, --tid or --time; "
         "--callers/--callees show one function's stacks)";
}

Result<std::unique_ptr<SampleSelectingSource>> SelectSamplesForView(ProfileSource& source,
                                                                    const SampleFilter& filter,
                                                                    const std::string& view) {
  if (auto misuse = RowFilterMisuse(filter, view)) return Error::BadRequest(*misuse);
  if (!filter.restricts_rows() && !filter.time_start && !filter.time_end)
    return std::unique_ptr<SampleSelectingSource>();
  auto selector = SampleSelector::Create(filter, source.metadata().start_timestamp);
  if (!selector.ok()) return Error::BadRequest(selector.error().message());
  return std::make_unique<SampleSelectingSource>(source, std::move(selector).value());
}

}  // namespace tprof
