/*
 * The pod sandbox's pause process for the local cluster (test/cluster), with the semantics of
 * upstream's build/pause/linux/pause.c: it holds the pod's namespaces by sleeping forever, exits
 * 0 on SIGINT/SIGTERM, and as PID 1 of a shared PID namespace reaps every orphaned child.
 * Written for this project; built with `gcc -static -Os` by images.ts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0)) {
    puts("pause (kruise-ha local cluster)");
    return 0;
  }
  if (getpid() != 1) fputs("Warning: pause should be the first process\n", stderr);

  struct sigaction stop = {.sa_handler = on_stop};
  sigemptyset(&stop.sa_mask);
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0) return 1;
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
  sigemptyset(&child.sa_mask);
  if (sigaction(SIGCHLD, &child, NULL) < 0) return 2;

  for (;;) pause();
  fputs("Error: infinite loop terminated\n", stderr);
  return 42;
}
