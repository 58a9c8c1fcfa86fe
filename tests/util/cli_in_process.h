// Running a `strata` command inside a forked test process rather than through the binary
// (tests/util/cli_run.h), for what only a process's own state can set up: the power-loss
// journal (io::StartPowerLossJournalForTesting), a full disk (io::SetWriteLimitForTesting).
// Header-only; the test links strata_cli (tools/ less main.cc).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"

namespace strata::testing {

// In a child made by fork(): runs `strata <args>` as tools/main.cc would (the commands this
// test needs registered: ingest, query, export and the admin ones), its stdout and stderr
// going to the files named ("" for /dev/null), after `setup` (the process's test hooks), and
// exits with the command's exit code (121: the arguments did not parse).
[[noreturn]] inline void RunCliInThisProcess(const std::vector<std::string>& args,
                                             const std::string& out_path,
                                             const std::string& err_path,
                                             const std::function<void()>& setup) {
  auto redirect = [](const std::string& path, int to) {
    const int fd = ::open(path.empty() ? "/dev/null" : path.c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) ::dup2(fd, to);
  };
  redirect(out_path, 1);
  redirect(err_path, 2);
  if (setup) setup();
  CLI::App app("strata");
  cli::CommandList commands;
  cli::RegisterIngest(&app, &commands);
  cli::RegisterQuery(&app, &commands);
  cli::RegisterExport(&app, &commands);
  cli::RegisterAdmin(&app, &commands);
  std::vector<std::string> words = {"strata"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    _exit(121);
  }
  for (const cli::Command& c : commands) {
    if (!c.app->parsed()) continue;
    cli::SetCommandName("strata " + c.app->get_name());
    const int code = c.run();
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  _exit(122);
}

}  // namespace strata::testing
