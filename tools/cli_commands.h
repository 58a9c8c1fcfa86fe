// The subcommands of the `strata` tool. Each Register* function adds its subcommand (options,
// help text) to the CLI11 app and records what to run when it was the one given.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace strata::cli {

// A subcommand and the function that runs it (returns the process exit code).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
using CommandList = std::vector<Command>;

void RegisterGenerate(CLI::App* app, CommandList* commands);
void RegisterIngest(CLI::App* app, CommandList* commands);
void RegisterAnalyze(CLI::App* app, CommandList* commands);
void RegisterQuery(CLI::App* app, CommandList* commands);
void RegisterExport(CLI::App* app, CommandList* commands);
// compact, inspect, verify, repair.
void RegisterAdmin(CLI::App* app, CommandList* commands);
// watch: the change feed of a store another process writes.
void RegisterWatch(CLI::App* app, CommandList* commands);
// view create, drop, list, show.
void RegisterView(CLI::App* app, CommandList* commands);

// Validators for numeric options, with messages that name the accepted range: the whole value
// must be a decimal number in [min, max] ("--batch: expected an integer from 1 to
// 18446744073709551615, got '-5'"). CLI11 2.1's own checks cannot do it: its unsigned
// conversion turns "-5" into 2^64 - 5 and "99999999999999999999" into 2^64 - 1 without an error,
// so CLI::Range on an unsigned option never sees the value given, and CLI::NonNegativeNumber
// prints DBL_MAX in full.
CLI::Validator UnsignedIn(uint64_t min, uint64_t max);
CLI::Validator SignedIn(int64_t min, int64_t max);
CLI::Validator RealAtLeast(double min);

// What to tell a user when a command throws: std::bad_alloc (out of memory) and
// std::system_error EAGAIN (a thread or resource the system refused) become messages saying
// what to change; anything else is "internal error: <what()>".
std::string DescribeException(const std::exception& e);

// The exit-code paragraph every --help ends with.
const char* ExitCodesHelp();
// `details`, then the exit-code paragraph: the footer of a subcommand's --help.
std::string HelpFooter(const std::string& details);

}  // namespace strata::cli
