// Runs a command as another user, as the lab's checks of what a user who is not root may do
// (busybox has no setpriv):  as_user UID COMMAND [ARGS...]
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: as_user UID COMMAND [ARGS...]\n");
    return 2;
  }
  const uid_t uid = (uid_t)strtoul(argv[1], NULL, 10);
  if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0) {
    perror("as_user");
    return 2;
  }
  execvp(argv[2], argv + 2);
  perror(argv[2]);
  return 127;
}
