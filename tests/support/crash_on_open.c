/* A fault injector for tests, loaded with LD_PRELOAD: the process dies with _exit(86) the moment it
 * opens a file whose path contains $ZT_CRASH_ON_OPEN (nothing happens when it is unset). A test
 * names a file that zerotrain writes in the middle of a checkpoint to leave a partial checkpoint
 * behind, as a crash or a kill at that moment would; zerotrain itself has no hook for it. With
 * $ZT_CRASH_ON_OPEN_SIGNAL set to a signal number, the process instead sends itself that signal,
 * once, and goes on: a Ctrl-C or a kill arriving at that moment. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void crash_if_named(const char* path) {
  const char* pattern = getenv("ZT_CRASH_ON_OPEN");
  if (!pattern || !*pattern || !path || !strstr(path, pattern)) return;
  const char* signal_number = getenv("ZT_CRASH_ON_OPEN_SIGNAL");
  if (signal_number && *signal_number) {
    static int sent = 0;
    if (!sent) {
      sent = 1;
      raise(atoi(signal_number));
    }
    return;
  }
  static const char message[] = "crash_on_open: exiting as the test asked, on opening a file it named\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(86);
}

static mode_t mode_of(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(args, int) : 0;
}

#define NEXT(name, type) ((type)dlsym(RTLD_NEXT, name))

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  crash_if_named(path);
  return NEXT("open", int (*)(const char*, int, ...))(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  crash_if_named(path);
  return NEXT("open64", int (*)(const char*, int, ...))(path, flags, mode);
}

int openat(int dir, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  crash_if_named(path);
  return NEXT("openat", int (*)(int, const char*, int, ...))(dir, path, flags, mode);
}

int openat64(int dir, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  crash_if_named(path);
  return NEXT("openat64", int (*)(int, const char*, int, ...))(dir, path, flags, mode);
}

FILE* fopen(const char* path, const char* mode) {
  crash_if_named(path);
  return NEXT("fopen", FILE* (*)(const char*, const char*))(path, mode);
}

FILE* fopen64(const char* path, const char* mode) {
  crash_if_named(path);
  return NEXT("fopen64", FILE* (*)(const char*, const char*))(path, mode);
}
