# The layers of tprof's sources and what each may include: the one statement of the order, read
# by cmake/check_layers.cmake (includes) and cmake/check_layer_links.cmake (core's libraries).
# Lowest first:
#   core/base < core/model < {core/format, core/perfdata} < core/source
#               core/model < {core/analysis, core/metrics}
#   core < {symbolize, pmu} < report < views < cmd
# symbolize knows the model; pmu (a source: live recording) also the inputs below core/source;
# report reads analyses, metric tables and the model, never an input's details nor the PMU;
# views open a profile with its symbols and run a view's pipeline (source, analysis, renderer),
# or a recording from the PMU to a finished profile, for cmd/, which parses options and prints,
# and for tests; they know no CLI11.
set(parts core/base core/model core/format core/perfdata core/source core/analysis core/metrics
          symbolize pmu report views cmd)
set(allowed_core_base      core/base)
set(allowed_core_model     core/base core/model)
set(allowed_core_format    core/base core/model core/format)
set(allowed_core_perfdata  core/base core/model core/perfdata)
set(allowed_core_source    core/base core/model core/format core/perfdata core/source)
set(allowed_core_analysis  core/base core/model core/analysis)
set(allowed_core_metrics   core/base core/model core/metrics)
set(allowed_symbolize      core/base core/model symbolize)
set(allowed_pmu            core/base core/model core/format core/perfdata pmu)
set(allowed_report         core/base core/model core/analysis core/metrics symbolize report)
set(allowed_views          core/base core/model core/format core/perfdata core/source
                           core/analysis core/metrics symbolize pmu report views)
# Third-party headers a part may not include (a prefix of the included path): the views take
# plain request structs, so that tests and other front ends call them without a command line.
set(forbidden_views        CLI/)
set(allowed_cmd            ${parts})
