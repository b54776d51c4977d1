@testable import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Synchronization
import Testing

/// A machine whose events say what their transition returns, and which counts its `update`
/// calls per token: whether a transition that moved its instance to a host ran once.
enum TableProbe: Machine {
    enum Event: Codable, Sendable {
        /// No effect.
        case add(Int)
        /// `add`, then the same again as an inline event: an effect, so a host takes it over.
        case echo(Int)
        /// Counted under `token`, with an inline `add(1)`.
        case counted(token: String)
        /// Ends the machine (a terminal state).
        case finish
        /// Not handled (`.unhandled`).
        case ignored
    }

    struct State: Codable, Sendable, Equatable {
        var total = 0
        var done = false
    }

    static let calls = Mutex<[String: Int]>([:])

    static var initialState: State { State() }
    static func isTerminal(_ state: State) -> Bool { state.done }
    /// None at the initial state (so its instances may rest); 100 more past it, which a host
    /// made for a resting instance must not run: the instance started long before.
    static func startEffect(_ state: State) -> Effect { state.total == 0 ? .none : .events(.add(100)) }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .add(let amount):
            state.total += amount
            return .none
        case .echo(let amount):
            state.total += amount
            return .events(.add(amount))
        case .counted(let token):
            calls.withLock { $0[token, default: 0] += 1 }
            return .events(.add(1))
        case .finish:
            state.done = true
            return .none
        case .ignored:
            return .unhandled
        }
    }
}

/// Issue 37: the idle instances of a keyed machine that passivates and keeps nothing rest as
/// their state alone (`StateTable`), with a real worker runtime and coordinator in one
/// process (`InMemoryWorker`): plain events run there, anything more moves the instance to a host.
@Suite(.timeLimit(.minutes(2)))
struct StateTableTests {
    static func topology(passivateAfterMs: Int = 60_000, metrics: Bool = false) -> Topology {
        var topology = Topology(
            name: "resting",
            coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
            workers: [.init(name: "w")],
            machines: [.init(name: "probes", type: "TableProbe", worker: "w", keyed: true, passivateAfterMs: passivateAfterMs),
                       .init(name: "held", type: "TableProbe", worker: "w", keyed: true),
                       .init(name: "kept", type: "TableProbe", worker: "w", keyed: true, durability: .state,
                             passivateAfterMs: passivateAfterMs)],
            heartbeat: .init(intervalMs: 50, timeoutMs: 200))
        if metrics { topology.metrics = .init(listen: "tcp://127.0.0.1:0") }
        return topology
    }

    private static func worker(in cluster: InMemoryCluster) throws -> InMemoryWorker {
        var configuration = WorkerConfiguration()
        configuration.register(TableProbe.self)
        let store = RememberingStore()
        let session = RememberingStore.Session(store)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { session })
        worker.start()
        try #require(cluster.settle(worker) { worker.isWelcomed }, "\(cluster.warnings)")
        return worker
    }

    /// Sends `events` (address, JSON, correlation, no-wait) as one turn of client "c" and
    /// returns the replies in correlation order.
    private static func send(_ events: [(String, String, UInt64)], noWait: Bool = false, through cluster: InMemoryCluster,
                             to worker: InMemoryWorker) throws -> [WireMessage] {
        try cluster.exchange(events.map { address, json, correlation in
            WireMessage(Header(.event, flags: noWait ? [.noWait] : [], correlation: correlation), address: address, payload: Array(json.utf8))
        }, with: worker)
    }

    private static func get(_ address: String, correlation: UInt64, through cluster: InMemoryCluster,
                            to worker: InMemoryWorker) throws -> WireMessage {
        cluster.fromClients([("c", WireMessage(Header(.get, correlation: correlation), address: address))])
        var replies: [WireMessage] = []
        try #require(cluster.settle(worker) {
            replies += cluster.toClient("c")
            return !replies.isEmpty
        }, "\(cluster.warnings)")
        return replies[0]
    }

    private static func where_(_ address: String, on worker: InMemoryWorker) -> (host: Bool, table: Bool) {
        worker.onLoop { runtime in
            (runtime.instances[address] != nil, runtime.stateTables[MachineAddress.machine(of: address)]?.addresses.contains(address) == true)
        }
    }

    @Test func plainEventsRunOnTheStateAloneAndAReadIsAnsweredThere() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let replies = try Self.send([("probes/a", #"{"add":{"_0":2}}"#, 1), ("probes/a", #"{"add":{"_0":3}}"#, 2),
                                     ("probes/b", #"{"add":{"_0":7}}"#, 3), ("held/a", #"{"add":{"_0":1}}"#, 4),
                                     ("kept/a", #"{"add":{"_0":1}}"#, 5)],
                                    through: cluster, to: worker)
        #expect(replies.map(Self.state) == [Self.total(2), Self.total(5), Self.total(7), Self.total(1), Self.total(1)])
        #expect(Self.where_("probes/a", on: worker) == (false, true))
        #expect(Self.where_("probes/b", on: worker) == (false, true))
        // Not passivating, or durable: hosts, as before.
        #expect(Self.where_("held/a", on: worker) == (true, false))
        #expect(Self.where_("kept/a", on: worker) == (true, false))

        let state = try Self.get("probes/a", correlation: 6, through: cluster, to: worker)
        #expect(Self.state(state) == Self.total(5))
        #expect(Self.where_("probes/a", on: worker) == (false, true))
        // A host made for it goes on from there, without the start effect of a new instance.
        let echoed = try Self.send([("probes/a", #"{"echo":{"_0":1}}"#, 7)], through: cluster, to: worker)
        #expect(Self.state(echoed[0]) == Self.total(7))
        #expect(Self.where_("probes/a", on: worker) == (true, false))
        let after = try Self.send([("probes/a", #"{"add":{"_0":1}}"#, 8)], through: cluster, to: worker)
        #expect(Self.state(after[0]) == Self.total(8))
        #expect(Self.state(try Self.get("probes/a", correlation: 9, through: cluster, to: worker)) == Self.total(8))
    }

    @Test func aTransitionWithAnEffectIsTakenOverByAHostAndRunsOnce() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let token = "taken-over-\(UInt64.random(in: 0 ... .max))"
        let replies = try Self.send([("probes/x", #"{"add":{"_0":2}}"#, 1), ("probes/x", #"{"echo":{"_0":3}}"#, 2),
                                     ("probes/y", #"{"counted":{"token":"\#(token)"}}"#, 3)],
                                    through: cluster, to: worker)
        // The reply follows the inline event the transition started, as a host's does.
        #expect(replies.map(Self.state) == [Self.total(2), Self.total(8), Self.total(1)])
        #expect(TableProbe.calls.withLock { $0[token] } == 1, "update ran once for the event a host took over")
        #expect(Self.where_("probes/x", on: worker) == (true, false))
        #expect(Self.where_("probes/y", on: worker) == (true, false))
    }

    /// A watcher's prefixes move what they cover to hosts (which publish), and only that: a
    /// watcher of one address, of part of a key, of another machine, of the whole machine.
    @Test func aWatcherMovesWhatItWatchesToHostsAndNothingElse() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let keys = ["w1", "w2", "x1", "x2", "y1"]
        _ = try Self.send(keys.enumerated().map { ("probes/\($1)", #"{"add":{"_0":1}}"#, UInt64($0 + 1)) }, through: cluster, to: worker)
        func watch(_ prefixes: [String]) -> [String] {
            worker.onLoop { runtime in
                runtime.observation.update(Observation(prefixes: prefixes))
                runtime.hostWatchedTableEntries()
            }
            return keys.filter { Self.where_("probes/\($0)", on: worker).host }
        }
        #expect(watch(["state:held/"]) == [], "another machine's watcher moves nothing")
        #expect(watch(["state:probes/w1"]) == ["w1"])
        #expect(watch(["effect:probes/x"]) == ["w1", "x1", "x2"])
        #expect(watch(["state:probes"]) == keys)
        #expect(worker.onLoop { $0.stateTables["probes"]?.count } == 0)
    }

    @Test func anUnhandledEventIsAnsweredAsAHostAnswersIt() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let replies = try Self.send([("probes/u", #"{"add":{"_0":2}}"#, 1), ("probes/u", #""ignored""#, 2)], through: cluster, to: worker)
        #expect(Self.state(replies[1]) == Self.total(2))
        #expect(replies[1].header.flags.contains(.unhandled), "\(replies[1].header)")
    }

    @Test func aTerminalTransitionEndsTheInstanceOnAHost() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let replies = try Self.send([("probes/z", #"{"add":{"_0":4}}"#, 1), ("probes/z", #""finish""#, 2)], through: cluster, to: worker)
        #expect(Self.state(replies[1]) == Self.total(4, done: true))
        #expect(Self.where_("probes/z", on: worker).table == false)
        let ended = worker.onLoop { $0.instances["probes/z"]?.hasEnded }
        #expect(ended == true)
    }

    @Test func aRefusedEventAnswersWhyAndANewKeyRestsAtItsInitialState() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let replies = try Self.send([("probes/r", #"{"nope":{}}"#, 1), ("probes/r", #"{"add":{"_0":1}}"#, 2)], through: cluster, to: worker)
        let error = try #require(replies[0].wireError)
        #expect(error.code == .undecodableEvent && error.address == "probes/r", "\(error)")
        #expect(Self.state(replies[1]) == Self.total(1))
    }

    @Test func noWaitEventsAreAcceptedAndRunOnTheStateAlone() throws {
        let cluster = InMemoryCluster(topology: Self.topology())
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        let replies = try Self.send([("probes/n", #"{"add":{"_0":2}}"#, 1), ("probes/n", #"{"echo":{"_0":1}}"#, 2),
                                     ("probes/m", #"{"add":{"_0":5}}"#, 3)], noWait: true, through: cluster, to: worker)
        #expect(replies.map(\.header.kind) == [.accepted, .accepted, .accepted])
        #expect(Self.where_("probes/n", on: worker) == (true, false), "the echo moved it to a host")
        #expect(Self.where_("probes/m", on: worker) == (false, true))
        // The bare `add(1)` the echo's host runs inline, not the start effect's 100.
        #expect(Self.state(try Self.get("probes/n", correlation: 4, through: cluster, to: worker)) == Self.total(4))
        #expect(Self.state(try Self.get("probes/m", correlation: 5, through: cluster, to: worker)) == Self.total(5))
    }

    @Test func anIdleRestingStateIsDroppedByTheSweepAndItsKeyStartsAfresh() throws {
        let cluster = InMemoryCluster(topology: Self.topology(passivateAfterMs: 100))
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        _ = try Self.send([("probes/s", #"{"add":{"_0":9}}"#, 1)], through: cluster, to: worker)
        // Sweeps far enough apart, whatever the clock says: each begins one.
        let start = ContinuousClock.now + .seconds(3600)
        for sweep in 0 ..< 6 where Self.where_("probes/s", on: worker).table {
            worker.onLoop { $0.passivateIdle(now: start + .seconds(sweep)) }
        }
        #expect(Self.where_("probes/s", on: worker) == (false, false))
        let again = try Self.send([("probes/s", #"{"add":{"_0":1}}"#, 2)], through: cluster, to: worker)
        #expect(Self.state(again[0]) == Self.total(1), "not durable: it starts afresh")
    }

    /// A table larger than one sweep's ticks can walk goes on at the next sweep from where it
    /// stopped, so every idle entry leaves: a walk that began again at the first slot at each
    /// sweep reached only the part that fits, and the rest stayed for good.
    @Test func aTableLargerThanOneSweepsWalkIsDroppedWhole() {
        let machine = Welcome.HostedMachine(name: "probes", type: "TableProbe", keyed: true, passivateAfterMs: 200)
        var passivation = Passivation()
        var now = ContinuousClock.now
        passivation.adopt([machine], now: now)
        let table = StateTable<TableProbe>(initial: .init(), type: "TableProbe", path: HostedPath<TableProbe>())
        for index in 0..<5_000 { table.entries["probes/\(index)"] = .init(state: .init(), touched: 0) }
        // 8,192 slots, 512 walked per tick, two ticks per sweep: a sweep walks an eighth.
        #expect(table.entries.capacity == 8_192)
        var dropped = 0
        for _ in 0..<100 {
            now += .milliseconds(50)
            _ = passivation.toJudge(now: now, live: [])
            let judging = passivation.judging
            if let idleThrough = judging.idleThrough(machine: "probes") {
                dropped += table.sweep(judging.sweep, idleThrough: idleThrough, slots: 512).dropped
            }
        }
        #expect(dropped == 5_000 && table.count == 0)
    }

    @Test func withMetricsOnEveryInstanceIsAHost() throws {
        let cluster = InMemoryCluster(topology: Self.topology(metrics: true))
        let worker = try Self.worker(in: cluster)
        defer { worker.stop() }
        _ = try Self.send([("probes/t", #"{"add":{"_0":1}}"#, 1)], through: cluster, to: worker)
        #expect(Self.where_("probes/t", on: worker) == (true, false))
        #expect(worker.onLoop { $0.stateTables.isEmpty })
    }

    /// The state a reply carries; nil for another reply.
    static func state(_ reply: WireMessage) -> TableProbe.State? {
        reply.header.kind == .state ? try? WireJSON.decode(TableProbe.State.self, from: reply.payload) : nil
    }

    static func total(_ total: Int, done: Bool = false) -> TableProbe.State { TableProbe.State(total: total, done: done) }
}
