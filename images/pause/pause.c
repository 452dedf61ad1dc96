/*
 * kubelab's pause: the process that holds a pod sandbox's namespaces open.
 *
 * What a sandbox's first process must do, and all this one does:
 *   - sleep until told to stop, using no CPU;
 *   - exit 0 on SIGINT or SIGTERM, so the runtime can stop the sandbox at once;
 *   - reap any child it inherits (it is PID 1 of the pod when the pod shares
 *     its PID namespace), so no zombie piles up;
 *   - `-v` prints its version and exits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef VERSION
#define VERSION "unknown"
#endif

static void stop(int sig) {
    (void)sig;
    _exit(0);
}

static void reap(int sig) {
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved;
}

static int on(int sig, void (*handler)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "-v") == 0) {
        printf("kubelab pause %s\n", VERSION);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: %s [-v]\n", argv[0]);
        return 2;
    }
    if (getpid() != 1) {
        fprintf(stderr, "pause: not PID 1; a pod sandbox runs this as its first process\n");
    }
    if (on(SIGINT, stop, 0) < 0 || on(SIGTERM, stop, 0) < 0 ||
        on(SIGCHLD, reap, SA_NOCLDSTOP | SA_RESTART) < 0) {
        perror("pause: sigaction");
        return 1;
    }
    for (;;) {
        pause();
    }
}
