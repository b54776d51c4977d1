#ifndef GROVE_CZEROMQ_SHIM_H
#define GROVE_CZEROMQ_SHIM_H
#include <zmq.h>
#include <sys/eventfd.h>
#include <errno.h>
#include <unistd.h>
#endif
