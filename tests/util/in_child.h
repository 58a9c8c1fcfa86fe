// Running part of a test in a forked child, to leave a store as a crashed process would.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace strata::testing {

// Runs fn in a child process, which exits without running destructors: fn leaks its DB to
// leave the store as a crash would. Fails the calling test unless the child exits with 0 (a
// failed assertion in fn makes it exit with 1).
inline void InChild(const std::function<void()>& fn) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    fn();
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
}

}  // namespace strata::testing
