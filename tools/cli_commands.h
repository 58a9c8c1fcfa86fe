// The subcommands of the `strata` tool. Each Register* function adds its subcommand (options,
// help text) to the CLI11 app and records what to run when it was the one given.
#pragma once

#include <CLI/CLI.hpp>
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
// compact, inspect, verify.
void RegisterAdmin(CLI::App* app, CommandList* commands);

// The exit-code paragraph every --help ends with.
const char* ExitCodesHelp();
// `details`, then the exit-code paragraph: the footer of a subcommand's --help.
std::string HelpFooter(const std::string& details);

}  // namespace strata::cli
