@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveRuntime
import Logging
import Synchronization
import ZeroMQ

/// A real worker (``WorkerRuntime``, its ``WorkerCore`` and its machines' hosts) joined to an
/// ``InMemoryCluster`` without a socket. Its `IOLoop` has no socket at all: it is only the thread
/// and executor the runtime and its hosts run on, as in a worker process. What the runtime posts
/// for the coordinator is kept here until ``InMemoryCluster/pump(_:)`` hands it to the
/// coordinator's loop; what the coordinator sends it is handed to the runtime on its loop, as the
/// worker's loop delegate hands it a received batch. Its machines run their own tasks, so a test
/// waits for their replies, with a deadline (``InMemoryCluster/pump(_:until:)``).
final class InMemoryWorker {
    let name: String
    let loop: IOLoop
    let runtime: WorkerRuntime
    private let outgoing: Outgoing
    /// Why the runtime ended its process, in order: a worker process would have exited at the
    /// first (with its status), so what the runtime did after it is not a promise.
    var exits: [WorkerExitReason] { exitLog.reasons.withLock { $0 } }
    private let exitLog = ExitLog()

    final class ExitLog: Sendable {
        let reasons = Mutex<[WorkerExitReason]>([])
    }

    /// - Parameters:
    ///   - name: The worker instance's name, its routing id.
    ///   - configuration: The machines it offers.
    ///   - openStore: Its store, for durable machines.
    ///   - flightLog: What its flight recorder writes to (one that outlives the worker, as the
    ///     file would); none by default.
    ///   - log: Where it logs; nowhere a test reads by default.
    ///   - recoveryTurn: How long one turn may bring stored instances back.
    ///   - clock: What its machines' timers run on (a `TestClock` moves only when told).
    init(name: String, configuration: WorkerConfiguration, openStore: (@Sendable () throws(StoreError) -> any MachineStore)? = nil,
         flightLog: (any FlightLog)? = nil, log: Logger = Logger(label: "grove.worker.in-memory"),
         recoveryTurn: Duration = Recovery.turn, clock: any HostClock = WallClock()) throws {
        let exitLog = exitLog
        self.name = name
        loop = try IOLoop(name: "memory-\(name)")
        // The link's socket id is never used as one: the bridge below takes what is posted for it.
        let link = WorkerLink(worker: name, loop: loop, socket: 0, log: log)
        var openRecorder: (@Sendable () throws(StoreError) -> FlightRecorder)?
        if let flightLog {
            openRecorder = { () throws(StoreError) -> FlightRecorder in FlightRecorder(log: flightLog) }
        }
        runtime = WorkerRuntime(configuration: configuration, link: link, log: log, coordinator: "in-memory", reconnect: {},
                                openStore: openStore, openRecorder: openRecorder, recoveryTurn: recoveryTurn, clock: clock,
                                end: { reason in exitLog.reasons.withLock { $0.append(reason) } })
        outgoing = Outgoing()
        loop.start(Bridge(outgoing: outgoing))
    }

    /// Registers with the coordinator (the message waits here until the next pump).
    func start() async {
        await runtime.start()
    }

    /// Hands what the coordinator sent (each message's frames, without the routing id) to the
    /// runtime, as one received batch.
    func deliver(_ messages: [[[UInt8]]]) {
        guard !messages.isEmpty else { return }
        let runtime = runtime
        let batch = messages.map { Inbound(socket: 0, frames: $0) }
        loop.execute { _ in runtime.assumeIsolated { $0.handle(batch) } }
    }

    /// Takes what the runtime sent the coordinator so far, each message's frames.
    func takeSent() -> [[[UInt8]]] {
        outgoing.messages.withLock { messages in
            defer { messages.removeAll() }
            return messages.map(\.frames)
        }
    }

    func stop() { loop.stop() }

    /// The state (JSON) of the instance at `address` as its machine has it now, read on the
    /// worker's loop without a message: nil when no such instance runs. For tests of what the
    /// worker does not send.
    func peekState(of address: String) async -> String? {
        let runtime = runtime
        return await withCheckedContinuation { (answer: CheckedContinuation<String?, Never>) in
            loop.execute { _ in
                runtime.assumeIsolated { runtime in
                    guard let instance = runtime.instances[address] else { return answer.resume(returning: nil) }
                    instance.state { answer.resume(returning: (try? $0.get()).map { String(decoding: $0, as: UTF8.self) } ?? "") }
                }
            }
        }
    }

    final class Outgoing: Sendable {
        let messages = Mutex<[Outbound]>([])
        /// The largest frame posted so far, what the coordinator's `ZMQ_MAXMSGSIZE` would see.
        let largestFrame = Mutex(0)
    }

    /// The largest frame the runtime has sent the coordinator so far.
    var largestFrameSent: Int { outgoing.largestFrame.withLock { $0 } }

    /// The worker loop's delegate: keeps what is posted instead of sending it on a socket.
    final class Bridge: IOLoopDelegate {
        let outgoing: Outgoing
        init(outgoing: Outgoing) { self.outgoing = outgoing }
        func received(_ batch: [Inbound], io: LoopIO) {}
        func sendFailed(_ socket: SocketID, frames: [[UInt8]], error: ZMQError, io: LoopIO) {}
        func tick(io: LoopIO) {}
        func posted(_ messages: [Outbound], io: LoopIO) {
            outgoing.messages.withLock { $0 += messages }
            let largest = messages.lazy.flatMap(\.frames).map(\.count).max() ?? 0
            outgoing.largestFrame.withLock { $0 = max($0, largest) }
        }
    }
}

extension InMemoryCluster {
    /// One exchange with a real worker: what it sent reaches the coordinator in one turn, what
    /// the coordinator sent it (lone messages and batches, as they left) is handed to it.
    func pump(_ worker: InMemoryWorker) {
        let identity = Array(worker.name.utf8)
        loop.receive(worker.takeSent().map { Inbound(socket: workers, frames: [identity] + $0) })
        worker.deliver(toWorker(worker.name).map(\.frames))
    }

    /// Pumps until `done` holds, at most for `deadline` (the worker's machines answer from their
    /// own tasks); the last value of `done` tells whether it held.
    @discardableResult
    func pump(_ worker: InMemoryWorker, until done: () -> Bool, deadline: Duration = .seconds(10)) async throws -> Bool {
        let giveUp = ContinuousClock.now + deadline
        while ContinuousClock.now < giveUp {
            pump(worker)
            if done() { return true }
            try await Task.sleep(for: .milliseconds(2))
        }
        return done()
    }
}

extension Topology {
    /// An in-memory topology of one worker `w` hosting `machines`, durable ones writing a
    /// record every 3 events. Its heartbeat timeout is long: a test that pauses between pumps
    /// (a loaded machine) must not find its worker silent, registering again and its requests
    /// answered `worker-lost`.
    static func durableWorker(_ name: String, machines: [MachineSpec]) -> Topology {
        Topology(
            name: name,
            coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
            workers: [.init(name: "w")],
            machines: machines,
            heartbeat: .init(intervalMs: 100, timeoutMs: 5000),
            durability: .init(snapshotEvery: 3)
        )
    }
}
