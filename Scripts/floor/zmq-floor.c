// zmq-floor: the round trip of bare libzmq in C over the hops Grove's raw baseline takes, so the
// benchmark report can show what the machine itself allows. Scripts/bench.sh builds and runs it.
//
//   client DEALER(s) ──▶ broker ROUTER │ broker ROUTER ──▶ worker DEALER(s) (echo)
//                    ◀──               │               ◀──
//
// One broker process, WORKERS echoing worker processes (round robin), and CLIENTS client
// threads in this process sharing one context, so one libzmq I/O thread (as fsm-load's
// connections do): every thread plus libzmq's I/O threads, ipc in the abstract namespace. Each
// client sends one 64-byte message per event on a fixed schedule (RATE / CLIENTS each) and
// measures each round trip from the event's scheduled time (a late send counts as latency).
// With WARMUP, the same schedule runs that many seconds first, unmeasured (as fsm-load's
// --warmup). It prints one JSON object: the rate, the shape, the round trips, latency
// percentiles in microseconds, and the CPU seconds spent while the measured schedule ran (all
// workers together).
//
// Usage: zmq-floor RATE SECONDS [CLIENTS [WORKERS [WARMUP]]]
//        (CLIENTS and WORKERS from 1 to 8, default 1; WARMUP seconds, default 0)

#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

enum { payload_size = 64, frame_capacity = 256, max_peers = 8 };

static void fail(const char *what) {
    fprintf(stderr, "zmq-floor: %s failed: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// No high-water mark: a ROUTER at its mark drops messages without a word, which would lose the
// slowest round trips and flatter the percentiles.
static void unlimited_queues(void *socket) {
    int unlimited = 0;
    zmq_setsockopt(socket, ZMQ_SNDHWM, &unlimited, sizeof unlimited);
    zmq_setsockopt(socket, ZMQ_RCVHWM, &unlimited, sizeof unlimited);
}

static int more(void *socket) {
    int flag = 0;
    size_t size = sizeof flag;
    zmq_getsockopt(socket, ZMQ_RCVMORE, &flag, &size);
    return flag;
}

// Front: [client id][payload] in, back: [worker id][client id][payload] out, and the reverse.
// A worker announces itself with a one-frame message; until all `expected` have, what clients
// send is dropped (they probe until an echo comes back), so every worker takes its turn.
static void broker(const char *front_endpoint, const char *back_endpoint, int expected) {
    void *context = zmq_ctx_new();
    void *front = zmq_socket(context, ZMQ_ROUTER), *back = zmq_socket(context, ZMQ_ROUTER);
    unlimited_queues(front);
    unlimited_queues(back);
    if (zmq_bind(front, front_endpoint) != 0 || zmq_bind(back, back_endpoint) != 0) fail("broker bind");
    zmq_pollitem_t items[2] = {{front, 0, ZMQ_POLLIN, 0}, {back, 0, ZMQ_POLLIN, 0}};
    char worker[max_peers][frame_capacity], frame[3][frame_capacity];
    int worker_size[max_peers], workers = 0, next = 0, size[3];
    for (;;) {
        if (zmq_poll(items, 2, -1) < 0) fail("broker poll");
        while ((size[0] = zmq_recv(front, frame[0], frame_capacity, ZMQ_DONTWAIT)) >= 0) {
            size[1] = zmq_recv(front, frame[1], frame_capacity, 0);
            if (workers < expected) continue;
            int target = next;
            next = (next + 1) % workers;
            zmq_send(back, worker[target], worker_size[target], ZMQ_SNDMORE);
            zmq_send(back, frame[0], size[0], ZMQ_SNDMORE);
            zmq_send(back, frame[1], size[1], 0);
        }
        while ((size[0] = zmq_recv(back, frame[0], frame_capacity, ZMQ_DONTWAIT)) >= 0) {
            size[1] = zmq_recv(back, frame[1], frame_capacity, 0);
            if (!more(back)) {
                if (workers < max_peers) {
                    memcpy(worker[workers], frame[0], size[0]);
                    worker_size[workers++] = size[0];
                }
                continue;
            }
            size[2] = zmq_recv(back, frame[2], frame_capacity, 0);
            zmq_send(front, frame[1], size[1], ZMQ_SNDMORE);
            zmq_send(front, frame[2], size[2], 0);
        }
    }
}

static void worker(const char *back_endpoint, int number) {
    void *context = zmq_ctx_new();
    void *socket = zmq_socket(context, ZMQ_DEALER);
    unlimited_queues(socket);
    char id[16];
    int id_size = snprintf(id, sizeof id, "worker-%d", number);
    zmq_setsockopt(socket, ZMQ_ROUTING_ID, id, (size_t)id_size);
    if (zmq_connect(socket, back_endpoint) != 0) fail("worker connect");
    if (zmq_send(socket, "ready", 5, 0) < 0) fail("worker ready");
    char client[frame_capacity], payload[frame_capacity];
    for (;;) {
        int client_size = zmq_recv(socket, client, frame_capacity, 0);
        int payload_size_read = zmq_recv(socket, payload, frame_capacity, 0);
        if (client_size < 0 || payload_size_read < 0) fail("worker receive");
        zmq_send(socket, client, client_size, ZMQ_SNDMORE);
        zmq_send(socket, payload, payload_size_read, 0);
    }
}

// CPU seconds (user + system) of a process so far, from /proc.
static double cpu_seconds(pid_t pid) {
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    size_t length = fread(line, 1, sizeof line - 1, file);
    fclose(file);
    line[length] = 0;
    char *end = strrchr(line, ')'); // the command name may hold spaces
    unsigned long user = 0, system = 0;
    if (end) sscanf(end + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user, &system);
    return (double)(user + system) / (double)sysconf(_SC_CLK_TCK);
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

// Waits until the socket is readable or the deadline passes (ZMQ_FD is edge-triggered: ZMQ_EVENTS decides).
static int wait_readable(void *socket, int fd, int64_t deadline) {
    for (;;) {
        int events = 0;
        size_t size = sizeof events;
        zmq_getsockopt(socket, ZMQ_EVENTS, &events, &size);
        if (events & ZMQ_POLLIN) return 1;
        int64_t left = deadline - now_ns();
        if (left <= 0) return 0;
        struct timespec timeout = {left / 1000000000, left % 1000000000};
        struct pollfd descriptor = {fd, POLLIN, 0};
        ppoll(&descriptor, 1, &timeout, NULL);
    }
}

// A finite positive number, all of `text`; else 0.
static double positive_number(const char *text) {
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != 0 || !isfinite(value) || value <= 0) return 0;
    return value;
}

// A whole number from 1 to max_peers, all of `text`; else 0.
static int peer_count(const char *text) {
    double value = positive_number(text);
    return value >= 1 && value <= max_peers && value == (double)(int)value ? (int)value : 0;
}

// One client connection: its own context and DEALER, its share of the rate, its round trips.
struct client {
    void *context;
    const char *endpoint;
    double rate, seconds, warmup;
    int64_t count, received, *latency;
    int failed; // 1 when no echo came back to its probes within 10 s
};

// All clients start their schedules together, once every one has had its first echo; and their
// measured schedules together, after the warm-up (the main thread reads CPU times at both).
static pthread_barrier_t started, warmed;

static void *run_client(void *raw) {
    struct client *self = raw;
    void *socket = zmq_socket(self->context, ZMQ_DEALER);
    int no_linger = 0;
    zmq_setsockopt(socket, ZMQ_LINGER, &no_linger, sizeof no_linger);
    unlimited_queues(socket);
    if (zmq_connect(socket, self->endpoint) != 0) fail("client connect");
    int fd;
    size_t fd_size = sizeof fd;
    zmq_getsockopt(socket, ZMQ_FD, &fd, &fd_size);
    char payload[payload_size] = {0}, reply[frame_capacity];

    // Until every worker has announced itself, the broker drops what it gets: probe until an echo.
    int64_t gave_up = now_ns() + 10 * (int64_t)1000000000;
    for (;;) {
        int64_t probe = -1;
        memcpy(payload, &probe, sizeof probe);
        if (zmq_send(socket, payload, payload_size, 0) < 0) fail("client send");
        if (wait_readable(socket, fd, now_ns() + 20000000) && zmq_recv(socket, reply, frame_capacity, 0) >= 0) break;
        if (now_ns() > gave_up) { self->failed = 1; break; }
    }
    while (zmq_recv(socket, reply, frame_capacity, ZMQ_DONTWAIT) >= 0) {}
    pthread_barrier_wait(&started);

    // The warm-up: the same schedule, its echoes marked (-1) and not measured.
    int64_t warm_count = self->failed ? 0 : (int64_t)(self->rate * self->warmup), warm_interval = (int64_t)(1e9 / self->rate);
    int64_t warm_start = now_ns(), warm_sent = 0;
    while (warm_sent < warm_count) {
        int64_t now = now_ns();
        for (; warm_sent < warm_count && warm_start + warm_sent * warm_interval <= now; warm_sent++) {
            int64_t marked = -1;
            memcpy(payload, &marked, sizeof marked);
            if (zmq_send(socket, payload, payload_size, 0) < 0) fail("client send");
        }
        if (wait_readable(socket, fd, warm_start + warm_sent * warm_interval)) {
            while (zmq_recv(socket, reply, frame_capacity, ZMQ_DONTWAIT) >= 0) {}
        }
    }
    pthread_barrier_wait(&warmed);

    int64_t count = self->failed ? 0 : (int64_t)(self->rate * self->seconds), interval = (int64_t)(1e9 / self->rate);
    int64_t *latency = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    if (!latency) { fprintf(stderr, "zmq-floor: out of memory\n"); exit(1); }
    int64_t start = now_ns(), sent = 0, received = 0;
    while (received < count) {
        int64_t now = now_ns();
        for (; sent < count && start + sent * interval <= now; sent++) {
            int64_t scheduled = start + sent * interval;
            memcpy(payload, &scheduled, sizeof scheduled);
            if (zmq_send(socket, payload, payload_size, 0) < 0) fail("client send");
        }
        if (now - start > (int64_t)((self->seconds + 10) * 1e9)) break; // what is missing by now is lost
        int64_t next = sent < count ? start + sent * interval : now + 1000000;
        if (!wait_readable(socket, fd, next)) continue;
        int size;
        while ((size = zmq_recv(socket, reply, frame_capacity, ZMQ_DONTWAIT)) >= 0) {
            int64_t scheduled;
            memcpy(&scheduled, reply, sizeof scheduled);
            if (scheduled >= 0 && received < count) latency[received++] = now_ns() - scheduled;
        }
    }
    self->count = count;
    self->received = received;
    self->latency = latency;
    zmq_close(socket);
    return NULL;
}

static pid_t spawn(pid_t parent, void (*body)(const char *, int), const char *endpoint, int argument) {
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        body(endpoint, argument);
        _exit(0);
    }
    return pid;
}

static void broker_main(const char *endpoints, int expected) {
    broker(endpoints, endpoints + strlen(endpoints) + 1, expected);
}

int main(int argc, char **argv) {
    int shaped = argc >= 3 && argc <= 6;
    double rate = shaped ? positive_number(argv[1]) : 0, seconds = shaped ? positive_number(argv[2]) : 0;
    int clients = argc >= 4 ? peer_count(argv[3]) : 1, workers = argc >= 5 ? peer_count(argv[4]) : 1;
    // Zero is a warm-up of none; otherwise a positive number of seconds, at most an hour.
    double warmup = argc >= 6 ? (strcmp(argv[5], "0") == 0 ? 0 : positive_number(argv[5])) : 0;
    int warmup_ok = argc < 6 || (strcmp(argv[5], "0") == 0) || (warmup > 0 && warmup <= 3600 && rate * warmup <= 50e6);
    if (rate <= 0 || seconds <= 0 || rate * seconds < clients || rate * seconds > 50e6 || rate > 1e9 || clients == 0 || workers == 0
        || !warmup_ok) {
        fprintf(stderr, "usage: zmq-floor RATE SECONDS [CLIENTS [WORKERS [WARMUP]]]   (round trips per second and seconds, "
                        "positive numbers, from 1 to 50 million round trips in all, at least one per client; CLIENTS and "
                        "WORKERS whole numbers from 1 to %d, default 1; WARMUP 0 or seconds up to 3600, default 0)\n", max_peers);
        return 64;
    }
    // Both endpoints in one buffer, front then back, each ending in a NUL (the broker takes one argument).
    char endpoints[128];
    int front_size = snprintf(endpoints, 64, "ipc://@grove-floor-%d-front", (int)getpid());
    const char *front = endpoints, *back = endpoints + front_size + 1;
    snprintf(endpoints + front_size + 1, 64, "ipc://@grove-floor-%d-back", (int)getpid());
    pid_t parent = getpid();
    pid_t broker_pid = spawn(parent, broker_main, endpoints, workers);
    pid_t worker_pids[max_peers];
    for (int index = 0; index < workers; index++) worker_pids[index] = spawn(parent, worker, back, index + 1);

    // After the forks: the children must not inherit it.
    void *context = zmq_ctx_new();
    if (!context) fail("client context");
    struct client connections[max_peers];
    pthread_t threads[max_peers];
    pthread_barrier_init(&started, NULL, (unsigned)clients + 1);
    pthread_barrier_init(&warmed, NULL, (unsigned)clients + 1);
    for (int index = 0; index < clients; index++) {
        connections[index] = (struct client){.context = context, .endpoint = front, .rate = rate / clients, .seconds = seconds,
                                             .warmup = warmup};
        if (pthread_create(&threads[index], NULL, run_client, &connections[index]) != 0) fail("client thread");
    }
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&warmed);
    double workers_before = 0, workers_after = 0;
    for (int index = 0; index < workers; index++) workers_before += cpu_seconds(worker_pids[index]);
    double cpu_before[2] = {cpu_seconds(getpid()), cpu_seconds(broker_pid)};
    for (int index = 0; index < clients; index++) pthread_join(threads[index], NULL);
    zmq_ctx_term(context);
    double cpu_after[2] = {cpu_seconds(getpid()), cpu_seconds(broker_pid)};
    for (int index = 0; index < workers; index++) workers_after += cpu_seconds(worker_pids[index]);
    kill(broker_pid, SIGKILL);
    waitpid(broker_pid, NULL, 0);
    for (int index = 0; index < workers; index++) {
        kill(worker_pids[index], SIGKILL);
        waitpid(worker_pids[index], NULL, 0);
    }
    for (int index = 0; index < clients; index++) {
        if (connections[index].failed) { fprintf(stderr, "zmq-floor: no echo from the workers within 10 s\n"); return 1; }
    }

    int64_t count = 0, received = 0;
    for (int index = 0; index < clients; index++) { count += connections[index].count; received += connections[index].received; }
    int64_t *latency = malloc(sizeof(int64_t) * (size_t)(received > 0 ? received : 1)), filled = 0;
    if (!latency) { fprintf(stderr, "zmq-floor: out of memory\n"); return 1; }
    for (int index = 0; index < clients; index++) {
        memcpy(latency + filled, connections[index].latency, sizeof(int64_t) * (size_t)connections[index].received);
        filled += connections[index].received;
        free(connections[index].latency);
    }
    qsort(latency, (size_t)received, sizeof(int64_t), compare);
    #define PERCENTILE(p) (received ? latency[(int64_t)((double)(received - 1) * (p))] / 1000 : 0)
    printf("{\"rate\":%.0f,\"seconds\":%g,\"clients\":%d,\"workers\":%d,\"roundTrips\":%lld,\"lost\":%lld,"
           "\"latencyMicros\":{\"p50\":%lld,\"p90\":%lld,\"p99\":%lld,\"p999\":%lld},"
           "\"cpuSeconds\":{\"client\":%.2f,\"broker\":%.2f,\"worker\":%.2f}}\n",
           rate, seconds, clients, workers, (long long)received, (long long)(count - received),
           (long long)PERCENTILE(0.5), (long long)PERCENTILE(0.9), (long long)PERCENTILE(0.99), (long long)PERCENTILE(0.999),
           cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1], workers_after - workers_before);
    free(latency);
    if (received < count) {
        fprintf(stderr, "zmq-floor: %lld of %lld round trips never came back within 10 s of the schedule's end\n",
                (long long)(count - received), (long long)count);
        return 1;
    }
    return 0;
}
