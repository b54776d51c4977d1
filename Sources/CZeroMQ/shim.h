#ifndef GROVE_CZEROMQ_SHIM_H
#define GROVE_CZEROMQ_SHIM_H
#include <zmq.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <errno.h>
#include <unistd.h>

/// Waits for `fd` to become readable for at most `microseconds` (poll(2) and zmq_poll count
/// whole milliseconds). Returns select(2)'s result.
static inline int grove_wait_readable(int fd, long long microseconds) {
    if (fd < 0 || fd >= FD_SETSIZE) return -1;
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(fd, &readable);
    struct timeval wait = { .tv_sec = microseconds / 1000000LL, .tv_usec = microseconds % 1000000LL };
    return select(fd + 1, &readable, 0, 0, &wait);
}

/// Waits for any of `count` descriptors to become readable for at most `microseconds`, as
/// `grove_wait_readable` does for one. Returns select(2)'s result.
static inline int grove_wait_any_readable(const int *fds, int count, long long microseconds) {
    fd_set readable;
    FD_ZERO(&readable);
    int highest = -1;
    for (int index = 0; index < count; index++) {
        if (fds[index] < 0 || fds[index] >= FD_SETSIZE) return -1;
        FD_SET(fds[index], &readable);
        if (fds[index] > highest) highest = fds[index];
    }
    struct timeval wait = { .tv_sec = microseconds / 1000000LL, .tv_usec = microseconds % 1000000LL };
    return select(highest + 1, &readable, 0, 0, &wait);
}
#endif
