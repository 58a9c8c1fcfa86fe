// strata: the StrataGraph command-line tool. One binary, one subcommand per task:
//
//   strata generate | ingest | analyze | query | compact | inspect | verify | export
//
// Every subcommand has --help. docs/cli.md is the manual. Exit codes: 0 success, 1 runtime or
// storage error, 2 usage error, 3 `query edge`: no such edge.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "tools/cli_commands.h"
#include "tools/cli_common.h"
#include "strata/version.h"

namespace strata::cli {

namespace {

int Main(int argc, char** argv) {
  CLI::App app(
      "StrataGraph: a disk-backed dynamic graph store. Load edges, keep them on disk, read "
      "consistent snapshots, run graph analytics.",
      "strata");
  app.set_version_flag("--version", std::string("strata ") + STRATA_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(ExitCodesHelp());

  CommandList commands;
  RegisterGenerate(&app, &commands);
  RegisterIngest(&app, &commands);
  RegisterAnalyze(&app, &commands);
  RegisterQuery(&app, &commands);
  RegisterExport(&app, &commands);
  RegisterAdmin(&app, &commands);
  RegisterWatch(&app, &commands);
  RegisterView(&app, &commands);

  // A first word that names no command: say so (CLI11 would only say one is required).
  if (argc >= 2 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "strata: unknown command '%s' (commands: %s; see --help)\n", argv[1],
                   names.c_str());
      return kExitUsage;
    }
  }

  // The same for the word after a command that has subcommands of its own (`query stat`).
  if (argc >= 2 && argv[1][0] != '-') {
    CLI::App* cmd = app.get_subcommand(argv[1]);
    const auto subs = cmd->get_subcommands([](CLI::App*) { return true; });
    for (int i = 2; i < argc && !subs.empty(); ++i) {
      const std::string t = argv[i];
      if (t == "--") break;
      if (t.size() > 1 && t[0] == '-') {
        // An option: skip its value when it takes one and the value is the next word.
        if (t.find('=') != std::string::npos) continue;
        const CLI::Option* o = cmd->get_option_no_throw(t);
        if (o == nullptr) break;  // unknown: CLI11 says so
        if (o->get_items_expected_min() > 0) ++i;
        continue;
      }
      bool known = false;
      std::string names;
      for (const CLI::App* sub : subs) {
        known = known || sub->get_name() == t;
        names += (names.empty() ? "" : ", ") + sub->get_name();
      }
      if (!known) {
        std::fprintf(stderr, "strata %s: unknown subcommand '%s' (subcommands: %s; see --help)\n",
                     argv[1], t.c_str(), names.c_str());
        return kExitUsage;
      }
      break;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string name = "strata";
    for (CLI::App* sub : app.get_subcommands()) name += " " + sub->get_name();
    std::fprintf(stderr, "%s: %s (see --help)\n", name.c_str(), e.what());
    return kExitUsage;
  }

  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    // Name errors after the full command path: "strata query edge", "strata ingest".
    std::string name = c.app->get_name();
    for (const CLI::App* p = c.app->get_parent(); p != nullptr && p->get_parent() != nullptr;
         p = p->get_parent()) {
      name = p->get_name() + " " + name;
    }
    SetCommandName("strata " + name);
    return c.run();
  }
  std::fprintf(stderr, "strata: no command given (see --help)\n");
  return kExitUsage;
}

}  // namespace
}  // namespace strata::cli

int main(int argc, char** argv) {
  try {
    return strata::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    // Named after the command that was running (SetCommandName), one line, exit 1.
    return strata::cli::Fail(strata::cli::kExitError, strata::cli::DescribeException(e));
  }
}
