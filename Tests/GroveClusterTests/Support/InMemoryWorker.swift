@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Logging
import Synchronization
import Testing
import ZeroMQ

/// A real worker (``WorkerRuntime``, its ``WorkerCore`` and its machines' hosts) joined to an
/// ``InMemoryCluster`` without a socket or a thread: the runtime and its hosts run on a
/// ``DrivenLoop``, an executor that only queues, and the test runs it (``runUntilIdle()``; every
/// ``deliver(_:)`` and ``InMemoryCluster/pump(_:)`` does). What the runtime posts for the
/// coordinator is kept until a pump hands it to the coordinator's loop; what the coordinator
/// sends it is handed to the runtime on its loop, as the worker's loop delegate hands it a
/// received batch. The worker's own tasks (turns of their own, publications, io calls) start on
/// the loop too, so one pump sees the whole of the worker's turn. What its machines run on the
/// shared pool (a `.task`) and the runtime's short pauses (recovery chunks, parked messages) come
/// back when they are done: a test that waits for those pumps until they did, with a deadline
/// (``InMemoryCluster/pump(_:until:deadline:)``).
final class InMemoryWorker {
    let name: String
    let loop: DrivenLoop
    let runtime: WorkerRuntime
    /// Why the runtime ended its process, in order: a worker process would have exited at the
    /// first (with its status), so what the runtime did after it is not a promise.
    var exits: [WorkerExitReason] { exitLog.reasons.withLock { $0 } }
    private let exitLog = ExitLog()
    /// Its direct route, when made with one: what it posts for its clients goes to ``directSocket``.
    let direct: DirectRoute?
    /// The socket id its direct route posts for (never a socket: the test takes what is posted).
    static let directSocket: SocketID = 7
    /// The largest frame posted so far, what the coordinator's `ZMQ_MAXMSGSIZE` would see.
    private var largestFrame = 0

    final class ExitLog: Sendable {
        let reasons = Mutex<[WorkerExitReason]>([])
    }

    /// A test's store opener, whatever shared store the welcome names.
    private static func ignoringSharedStore(
        _ open: (@Sendable () throws(StoreError) -> any MachineStore)?
    ) -> (@Sendable (SharedStore?) throws(StoreError) -> any MachineStore)? {
        guard let open else { return nil }
        return { (_: SharedStore?) throws(StoreError) -> any MachineStore in try open() }
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
    ///   - direct: Whether it has a direct route (``direct``), whose replies are posted for
    ///     ``directSocket``.
    init(name: String, configuration: WorkerConfiguration, openStore: (@Sendable () throws(StoreError) -> any MachineStore)? = nil,
         flightLog: (any FlightLog)? = nil, log: Logger = Logger(label: "grove.worker.in-memory"),
         recoveryTurn: Duration = Recovery.turn, clock: any HostClock = WallClock(), direct: Bool = false) throws {
        let exitLog = exitLog
        self.name = name
        loop = DrivenLoop()
        self.direct = direct ? DirectRoute(worker: name, endpoint: "ipc:///run/in-memory/direct/\(name).1", socket: Self.directSocket,
                                           loop: .driven(loop), curve: false) : nil
        // The link's socket id is never used as one: the test takes what is posted for it.
        let link = WorkerLink(worker: name, loop: .driven(loop), socket: 0, direct: self.direct, log: log)
        var openRecorder: (@Sendable () throws(StoreError) -> FlightRecorder)?
        if let flightLog {
            openRecorder = { () throws(StoreError) -> FlightRecorder in FlightRecorder(log: flightLog) }
        }
        runtime = WorkerRuntime(configuration: configuration, link: link, log: log, coordinator: "in-memory", reconnect: {},
                                openStore: Self.ignoringSharedStore(openStore), openRecorder: openRecorder, recoveryTurn: recoveryTurn, clock: clock,
                                end: { reason in exitLog.reasons.withLock { $0.append(reason) } })
    }

    /// Registers with the coordinator (the message waits here until the next pump).
    func start() {
        onLoop { $0.start() }
    }

    /// Runs what waits on the worker's loop, and what that queues, until nothing is left.
    func runUntilIdle() {
        loop.runUntilIdle()
    }

    /// Hands what the coordinator sent (each message's frames, without the routing id) to the
    /// runtime, as one received batch, and runs the worker until idle.
    func deliver(_ messages: [[[UInt8]]]) {
        if !messages.isEmpty {
            let runtime = runtime
            let batch = messages.map { Inbound(socket: 0, frames: $0) }
            loop.execute { runtime.assumeIsolated { $0.handle(batch) } }
        }
        loop.runUntilIdle()
    }

    /// Runs `body` on the worker's loop, isolated to its runtime, and the loop until idle: how a
    /// test reads or calls the runtime (an `await` on it would wait for a loop nobody runs).
    @discardableResult
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (isolated WorkerRuntime) -> T) -> T {
        let runtime = runtime
        let answer = Mutex<T?>(nil)
        loop.execute {
            let value = runtime.assumeIsolated { body($0) }
            answer.withLock { $0 = value }
        }
        loop.runUntilIdle()
        guard let value = answer.withLock({ $0.take() }) else { preconditionFailure("the worker's loop did not run \(name)'s body") }
        return value
    }

    /// Whether the coordinator's welcome holds, as the runtime's core has it.
    var isWelcomed: Bool { onLoop { $0.core.isWelcomed } }

    /// Takes what the runtime sent the coordinator so far, each message's frames.
    func takeSent() -> [[[UInt8]]] {
        let posted = loop.takePosted()
        largestFrame = max(largestFrame, posted.lazy.flatMap(\.frames).map(\.count).max() ?? 0)
        return posted.map(\.frames)
    }

    /// Nothing to stop: the worker runs only when the test runs it. Kept so tests read as a
    /// worker's life does.
    func stop() {}

    /// The state (JSON) of the instance at `address` as its machine has it now, read on the
    /// worker's loop without a message: nil when no such instance runs. For tests of what the
    /// worker does not send.
    func peekState(of address: String) -> String? {
        let answer = Mutex<String??>(nil)
        onLoop { runtime in
            guard let instance = runtime.instances[address] else { return answer.withLock { $0 = .some(nil) } }
            instance.state { state in answer.withLock { $0 = (try? state.get()).map { String(decoding: $0, as: UTF8.self) } ?? "" } }
        }
        guard let state = answer.withLock({ $0 }) else {
            Issue.record("\(address) did not answer for its state in its turn")
            return nil
        }
        return state
    }

    /// The largest frame the runtime has sent the coordinator so far (that a pump took).
    var largestFrameSent: Int { largestFrame }
}

extension InMemoryCluster {
    /// One exchange with a real worker: the worker runs until idle, what it sent reaches the
    /// coordinator in one turn, and what the coordinator sent it (lone messages and batches, as
    /// they left) is handed to it, and it runs until idle again. Nothing the worker does in its
    /// own turn is left for later.
    /// - Returns: Whether anything moved either way.
    @discardableResult
    func pump(_ worker: InMemoryWorker) -> Bool {
        worker.runUntilIdle()
        let identity = Array(worker.name.utf8)
        let sent = worker.takeSent()
        loop.receive(sent.map { Inbound(socket: workers, frames: [identity] + $0) })
        let received = toWorker(worker.name).map(\.frames)
        worker.deliver(received)
        return !sent.isEmpty || !received.isEmpty
    }

    /// Pumps until `done` holds, or until nothing moves between the worker and the coordinator
    /// and nothing on the worker's loop waits (then `done` does not hold and never will without
    /// something else happening: a client's message, time passing). For what the worker does in
    /// its own turns: no deadline, no sleep, the same every time.
    /// - Returns: Whether `done` held.
    @discardableResult
    func settle(_ worker: InMemoryWorker, until done: () -> Bool = { false }) -> Bool {
        // `done` may send (a client asking again): a pump after it carries that, too.
        while true {
            if done() { return true }
            if !pump(worker), worker.loop.isIdle { return done() }
        }
    }

    /// Sends `messages` as client `client` in one turn, and returns its replies (at least one
    /// per message) in correlation order, once `worker` has answered them all.
    func exchange(_ messages: [WireMessage], as client: String = "c", with worker: InMemoryWorker) throws -> [WireMessage] {
        fromClients(messages.map { (client, $0) })
        var replies: [WireMessage] = []
        let answered = settle(worker) {
            replies += toClient(client)
            return replies.count >= messages.count
        }
        try #require(answered, "\(replies.count) replies of \(messages.count): \(warnings)")
        return replies.sorted { $0.header.correlation < $1.header.correlation }
    }

    /// Pumps until `done` holds, at most for `deadline`, for what comes from outside the worker's
    /// own turns (a machine's `.task` on the shared pool, a handler that answers later); the
    /// last value of `done`, after a last pump, tells whether it held.
    @discardableResult
    func pump(_ worker: InMemoryWorker, until done: () -> Bool, deadline: Duration = .seconds(10)) async throws -> Bool {
        let giveUp = ContinuousClock.now + deadline
        while true {
            pump(worker)
            if done() { return true }
            guard ContinuousClock.now < giveUp else { return false }
            try await Task.sleep(for: .milliseconds(2))
        }
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
