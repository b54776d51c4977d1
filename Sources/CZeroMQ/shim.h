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
#endif
