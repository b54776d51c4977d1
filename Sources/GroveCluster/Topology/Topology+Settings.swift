extension Topology {
    /// The ZeroMQ endpoints the coordinator binds. Each starts with `ipc://` or `tcp://` (a
    /// topology file refuses `inproc://`: nothing outside the coordinator could reach it), and
    /// the three differ.
    public struct Endpoints: Sendable, Equatable {
        /// Where clients (`fsm-send`, `fsm-load`, any ZeroMQ DEALER) send events.
        public var clients: String
        /// Where worker processes register and exchange work.
        public var workers: String
        /// Where the coordinator publishes state changes and inspection events.
        public var events: String

        /// - Parameters:
        ///   - clients: The client endpoint, e.g. `"ipc://@grove-default/clients"`.
        ///   - workers: The worker endpoint.
        ///   - events: The publishing endpoint.
        public init(clients: String, workers: String, events: String) {
            self.clients = clients
            self.workers = workers
            self.events = events
        }
    }

    /// How often processes send heartbeats, and how long silence lasts before one counts as dead.
    public struct Heartbeat: Sendable, Equatable {
        /// Milliseconds between heartbeats; greater than 0. Defaults to 250.
        public var intervalMs: Int
        /// Milliseconds of silence after which a peer counts as dead; greater than
        /// ``intervalMs``. Defaults to 1500.
        public var timeoutMs: Int

        /// - Parameters:
        ///   - intervalMs: Milliseconds between heartbeats.
        ///   - timeoutMs: Milliseconds of silence before a peer counts as dead.
        public init(intervalMs: Int = 250, timeoutMs: Int = 1500) {
            self.intervalMs = intervalMs
            self.timeoutMs = timeoutMs
        }

        /// ``intervalMs`` as a duration.
        public var interval: Duration { .milliseconds(intervalMs) }
        /// ``timeoutMs`` as a duration.
        public var timeout: Duration { .milliseconds(timeoutMs) }
    }

    /// Capacities of the queues, in messages and in bytes; all greater than 0.
    public struct Queues: Sendable, Equatable {
        /// Events a machine instance may have waiting before senders are refused. Defaults to 1024.
        public var mailboxCapacity: Int
        /// Requests one worker may have unanswered (forwarded, not replied to yet) before the
        /// coordinator answers `busy`. Defaults to 10000.
        public var workerOutbox: Int
        /// The bytes one worker's unanswered requests may hold, with the replies they are expected
        /// to bring back (each estimated at the mean of the worker's recent replies), before the
        /// coordinator answers `busy`. Defaults to 64 MiB.
        public var workerOutboxBytes: Int
        /// Replies the coordinator holds for one client that does not read them before its further
        /// requests are answered `busy`. Defaults to 10000.
        public var clientOutbox: Int
        /// The bytes of the replies the coordinator holds for one client that does not read them:
        /// past it, further requests are answered `busy` and a reply that does not fit is replaced
        /// by a small `reply-dropped` error. Defaults to 16 MiB.
        public var clientOutboxBytes: Int
        /// Publications the coordinator holds for one watcher (the events socket's high-water
        /// mark) before it drops further ones for that watcher; the watcher sees the gap in
        /// their numbers. Defaults to 100000; ``watcherOutboxBytes`` may make it fewer.
        public var watcherOutbox: Int
        /// The bytes the coordinator may hold for one watcher connection that does not read:
        /// ZeroMQ counts a watcher's queue in messages, so the events socket holds at most as
        /// many publications as fit when each is as large as one may be
        /// (``Topology/watcherQueueMessages``). Defaults to 64 MiB.
        public var watcherOutboxBytes: Int

        /// - Parameters:
        ///   - mailboxCapacity: Events waiting per machine instance.
        ///   - workerOutbox: Requests unanswered per worker.
        ///   - workerOutboxBytes: Bytes of those requests and their expected replies per worker.
        ///   - clientOutbox: Replies held per client.
        ///   - clientOutboxBytes: Bytes of the replies held per client.
        ///   - watcherOutbox: Publications held per watcher.
        ///   - watcherOutboxBytes: Bytes of publications held per watcher.
        public init(mailboxCapacity: Int = 1024, workerOutbox: Int = 10000, workerOutboxBytes: Int = 64 << 20,
                    clientOutbox: Int = 10000, clientOutboxBytes: Int = 16 << 20, watcherOutbox: Int = 100_000,
                    watcherOutboxBytes: Int = 64 << 20) {
            self.mailboxCapacity = mailboxCapacity
            self.workerOutbox = workerOutbox
            self.workerOutboxBytes = workerOutboxBytes
            self.clientOutbox = clientOutbox
            self.clientOutboxBytes = clientOutboxBytes
            self.watcherOutbox = watcherOutbox
            self.watcherOutboxBytes = watcherOutboxBytes
        }
    }

    /// How long io calls may run and how many one worker runs at once for other workers'
    /// machines; both greater than 0.
    public struct IOLimits: Sendable, Equatable {
        /// Milliseconds an io call may run before its machine hears `timeout` and the task
        /// running it is cancelled, for requests whose `io[]` entry sets no `timeoutMs` and for
        /// requests that run beside their machine. Defaults to 30000.
        public var timeoutMs: Int
        /// io calls one worker may run at once for machines on other workers; a call beyond it,
        /// when every worker of the request's group is full, fails at once with `busy`.
        /// Defaults to 256.
        public var concurrentPerWorker: Int

        /// - Parameters:
        ///   - timeoutMs: The timeout of io calls whose placement sets none.
        ///   - concurrentPerWorker: io calls one worker runs at once for other workers' machines.
        public init(timeoutMs: Int = 30000, concurrentPerWorker: Int = 256) {
            self.timeoutMs = timeoutMs
            self.concurrentPerWorker = concurrentPerWorker
        }
    }
}
