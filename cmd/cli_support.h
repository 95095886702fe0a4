// What every subcommand shares: exit codes, the one-line error format, option suggestions.
#pragma once

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/source/profile_source.h"
#include "views/view_messages.h"

namespace tprof {

// Documented in docs/commands.md and `tprof --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitRuntimeError = 1,  // the command could not do its job (bad input file, I/O, kernel)
  kExitUsage = 2,         // the command line is wrong
  kExitRegression = 3,    // `tprof diff` gate: a regression threshold was crossed
  // An input was incomplete (cut short or damaged): the output covers what could be read and a
  // line says what was lost; `tprof diff`'s gate did not judge.
  kExitIncomplete = 4,
};

// "unknown option '--foo'; did you mean '--for'?", or for an option perf has and tprof spells
// otherwise, what to use instead.
std::string UnknownOptionMessage(const CLI::App& app, const std::string& word);

// The command edge's three kinds of message, one format each (tests hold every subcommand to
// them): a usage error, "tprof CMD: message (see 'tprof CMD --help')", returns kExitUsage;
int UsageError(const std::string& command, const std::string& message);
// what an input lost when it was read (a truncated file, dropped samples), "tprof CMD: warning:
// INPUT: warning", nothing when `warning` is empty;
void WarnAboutInput(const std::string& command, const std::string& input,
                    const std::string& warning);
// and what the user may want to know, "tprof CMD: note: note".
void Note(const std::string& command, const std::string& note);
// Prints "tprof CMD: message" on stderr and returns kExitRuntimeError.
int ReportError(const std::string& command, const std::string& message);

// kExitIncomplete when the input was read only in part (the summary's warning says what was
// lost), kExitOk otherwise: what a command that wrote its output ends with.
int ExitStatusOf(const SourceSummary& summary);
// A view's end: kExitIncomplete over an input read in part, kExitOk, or its error reported as
// ReportError does.
int ExitStatusOf(const std::string& command, const Result<ViewOutcome>& outcome);
// A view's notes and input warnings printed as Note and WarnAboutInput print them, for
// `command`; the files it wrote as "tprof CMD: WHAT" or, summaries, "[ tprof CMD: WHAT ]".
ViewMessages CommandMessages(const std::string& command);
// The same for `error`, with the exit status its kind calls for: kExitUsage for a bad request
// (an option naming what the input lacks), kExitRuntimeError for a failure.
int ReportError(const std::string& command, const Error& error);

// A subcommand: owns its option values, registers them on its CLI11 app, runs when selected.
class Subcommand {
 public:
  virtual ~Subcommand() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;
  virtual void Setup(CLI::App& app) = 0;
  virtual int Run() = 0;
};

std::unique_ptr<Subcommand> MakeRecordCommand();
std::unique_ptr<Subcommand> MakeReportCommand();
std::unique_ptr<Subcommand> MakeImportCommand();
std::unique_ptr<Subcommand> MakeDiffCommand();
std::unique_ptr<Subcommand> MakeStreamCommand();
std::unique_ptr<Subcommand> MakeTopdownCommand();
std::unique_ptr<Subcommand> MakeListCommand();

// A subcommand's usage line names the whole command ("Usage: tprof report [OPTIONS] ..."),
// whether its help was asked for as `tprof report --help` or `tprof help report`.
void NameWholeCommandInUsage(CLI::App& app);

// Replaces CLI11's generated "Usage:" line of `app` (which writes a positional taking 0 to 2
// values as "profiles(0x)") with `usage`, e.g. "tprof diff [OPTIONS] OLD NEW".
void SetUsageLine(CLI::App& app, std::string usage);

// Turns a CLI11 parse error into one line, with a suggestion for a misspelt option.
int ReportUsageError(const CLI::App& app, const CLI::ParseError& error);
// For a parsed subcommand that takes a command after "--" (its positional `command`, with
// prefix_command): kExitUsage, said on stderr, when CLI11 left an argument it did not know
// before the "--" (a misspelt option of tprof's: --bogus, --freqq 99), else kExitOk.
int CheckArgumentsBeforeCommand(const CLI::App& app, const std::vector<std::string>& command);

// --symfs and --binary, declared once for every command that reads recorded binaries: one file
// per --binary, so that a command's positional profiles are never taken as more binaries.
void AddSymbolOptions(CLI::App& app, std::string& symfs, std::vector<std::string>& binaries);

// The profile a command reads, -i FILE or FILE ('-': standard input), declared once for the
// commands that read one: both at once is a usage error ("report a.tprof -i b.tprof" reported
// a.tprof without a word), and an unknown short option CLI11 would take for the file ("-g",
// perf's habit) is named as such.
void AddProfileInputOptions(CLI::App& app, std::string& input);

// --time, declared once for every command that reads a profile's samples by time.
void AddTimeRangeOption(CLI::App& app, std::string& time);

// --json, and --csv where `csv` is given (the two exclude each other), declared once for every
// command with a machine-readable output; `what` says what is written and where its fields are
// described ("docs/report-schema.md"), empty for "instead of text".
void AddMachineFormatOptions(CLI::App& app, bool& json, bool* csv, const std::string& what);

// Parses -p / -t lists: "PID[,PID...]", each a positive number; `what` names them ("pid").
Result<std::vector<pid_t>> ParseIdList(const std::string& text, const char* what);

}  // namespace tprof
