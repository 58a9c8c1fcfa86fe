// Running the `strata` binary ($STRATA_BIN_DIR/strata) from a test: fork/exec with stdin from a
// string or a file, stdout and stderr captured through files (no pipe can fill up and block
// the child), an optional address-space limit, and the exit status kept apart from a death by
// signal. Header-only; used by tests/cli_test.cc and tests/fault_tools_test.cc.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace strata::testing {

inline const std::string& StrataBinary() {
  static const std::string bin = std::string(STRATA_BIN_DIR) + "/strata";
  return bin;
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void WriteWholeFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

struct CliResult {
  bool exited = false;  // false: killed by a signal (signal says which)
  int code = -1;        // exit status when exited
  int signal = 0;
  std::string out;
  std::string err;
};

struct CliRunOptions {
  std::string stdin_data;        // fed on stdin unless stdin_path is set
  std::string stdin_path;        // a file (or fifo) opened as stdin
  uint64_t address_space = 0;    // RLIMIT_AS for the child; 0: unlimited
  int run_as = -1;               // >= 0: the child takes this uid and gid before exec (root)
};

// A started child; Wait() collects it.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const CliRunOptions& o = CliRunOptions()) {
    static int counter = 0;
    base_ = "/tmp/strata-cli-run-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    const std::string in_path = o.stdin_path.empty() ? base_ + ".in" : o.stdin_path;
    if (o.stdin_path.empty()) WriteWholeFile(in_path, o.stdin_data);
    const std::string out_path = base_ + ".out", err_path = base_ + ".err";
    pid_ = fork();
    if (pid_ == 0) {
      int in = open(in_path.c_str(), O_RDONLY);
      int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in, 0);
      dup2(out, 1);
      dup2(err, 2);
      if (o.address_space != 0) {
        struct rlimit rl = {o.address_space, o.address_space};
        setrlimit(RLIMIT_AS, &rl);
      }
      if (o.run_as >= 0 && (setgid(o.run_as) != 0 || setuid(o.run_as) != 0)) _exit(126);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(StrataBinary().c_str()));
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(StrataBinary().c_str(), argv.data());
      _exit(127);
    }
  }
  pid_t pid() const { return pid_; }
  // The stderr written so far.
  std::string ErrSoFar() const { return ReadWholeFile(base_ + ".err"); }
  CliResult Wait() {
    CliResult r;
    int status = 0;
    waitpid(pid_, &status, 0);
    r.exited = WIFEXITED(status);
    r.code = r.exited ? WEXITSTATUS(status) : -1;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r.out = ReadWholeFile(base_ + ".out");
    r.err = ReadWholeFile(base_ + ".err");
    unlink((base_ + ".in").c_str());
    unlink((base_ + ".out").c_str());
    unlink((base_ + ".err").c_str());
    return r;
  }

 private:
  pid_t pid_ = -1;
  std::string base_;
};

inline CliResult RunStrata(const std::vector<std::string>& args,
                           const CliRunOptions& o = CliRunOptions()) {
  return CliProcess(args, o).Wait();
}

inline CliResult RunStrata(const std::vector<std::string>& args, const std::string& input) {
  CliRunOptions o;
  o.stdin_data = input;
  return CliProcess(args, o).Wait();
}

inline std::string DescribeRun(const std::vector<std::string>& args, const CliResult& r) {
  std::string cmd = "strata";
  for (const auto& a : args) cmd += " " + a;
  return cmd + "\n  " +
         (r.exited ? "exit " + std::to_string(r.code)
                   : "killed by signal " + std::to_string(r.signal)) +
         "\n  stderr: " + r.err + "\n  stdout: " + r.out.substr(0, 2000);
}

}  // namespace strata::testing
