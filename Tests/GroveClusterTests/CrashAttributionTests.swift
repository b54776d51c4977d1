@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import Grove
import GroveWire
import Testing

/// A counter for these tests, not durable: its crashes are attributed all the same.
enum TallyCounter: Machine {
    enum Event: Codable, Sendable {
        case add(Int)
        case reset
    }
    struct State: Codable, Sendable { var count = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .add(let amount): state.count &+= amount
        case .reset: state.count = 0
        }
        return .none
    }
}

/// Issue 34, crash containment on a real worker runtime and coordinator in one process: every
/// machine's events are recorded (not only durable ones), with their type and the request that
/// carried them; a restarted worker reports its predecessor's crash with its registration; a
/// pattern the coordinator quarantined is refused by the worker for every address.
@Suite(.timeLimit(.minutes(2)))
struct CrashAttributionTests {
    static let topology = Topology(
        name: "crashes",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tally", type: "TallyCounter", worker: "w", keyed: true)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    static func worker(_ log: MemoryFlightLog) throws -> InMemoryWorker {
        var configuration = WorkerConfiguration()
        configuration.register(TallyCounter.self)
        return try InMemoryWorker(name: "w", configuration: configuration, flightLog: log)
    }

    @Test func aMachineThatKeepsNothingIsRecordedWithItsTypeAndRequest() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let log = MemoryFlightLog()
        let worker = try Self.worker(log)
        defer { worker.stop() }
        try await PoisonEventTests.started(worker, in: cluster)
        let reply = try await PoisonEventTests.send(#"{"add":{"_0":2}}"#, to: "tally/a", cluster, worker, correlation: 7)
        #expect(reply.header.kind == .state, "\(reply.text)")
        let run = try #require(log.last, "a machine with durability none is recorded too")
        #expect(run.address == "tally/a")
        #expect(run.type == "TallyCounter")
        #expect(run.origin == .sent)
        #expect(run.correlation != 0)
    }

    @Test func aRestartedWorkerReportsWhatItsPredecessorDiedRunning() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let log = MemoryFlightLog()
        // As a process that trapped in `update` leaves it: begun, never ended; written as a
        // client may (spaced), reported as the type encodes it.
        log.begin(address: "tally/k-1", type: "TallyCounter", correlation: 99, event: Array(#"{ "add" : {"_0": 1} }"#.utf8),
                  binary: false, origin: .sent)
        // fsm-launch saw the predecessor exit: a crash report is counted only with such a witness.
        cluster.driver.withCore { $0.noteExit(of: "w", pid: 1, blamesEvent: true) }
        let worker = try Self.worker(log)
        defer { worker.stop() }
        try await PoisonEventTests.started(worker, in: cluster)
        let said = cluster.warnings.joined(separator: "\n")
        #expect(said.contains("worker w's last process died while it ran a sent event of tally/k-1 (TallyCounter.add)"), "\(said)")
        #expect(said.contains("crash 1 of TallyCounter.add"), "\(said)")
        #expect(worker.onLoop { $0.core.crashReport } == nil, "attributed: not sent again")
    }

    @Test func aQuarantinedPatternIsRefusedForEveryAddressAndOthersServed() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let worker = try Self.worker(MemoryFlightLog())
        defer { worker.stop() }
        try await PoisonEventTests.started(worker, in: cluster)
        worker.onLoop { $0.adoptPatterns([PoisonPattern(type: "TallyCounter", event: "add")]) }
        for (index, form) in [#"{"add":{"_0":1}}"#, #"{ "add" : { "_0" : 5 } }"#, #"{"\u0061dd":{"_0":1}}"#].enumerated() {
            let refused = try await PoisonEventTests.send(form, to: "tally/fresh-\(index)", cluster, worker, correlation: UInt64(10 + index))
            #expect(refused.header.kind == .error, "\(form): \(refused.text)")
            let error = try WireJSON.decode(WireError.self, from: refused.payload)
            #expect(error.code == .quarantined)
            #expect(error.message.contains("quarantined for every address (pattern TallyCounter.add)"), "\(error.message)")
            #expect(error.message.contains("fsm-send quarantines release TallyCounter add"), "\(error.message)")
        }
        let reset = try await PoisonEventTests.send(#""reset""#, to: "tally/fresh-9", cluster, worker, correlation: 20)
        #expect(reset.header.kind == .state, "another case of the type: \(reset.text)")
        #expect(reset.text == #"{"count":0}"#)
        worker.onLoop { $0.adoptPatterns([]) }
        let released = try await PoisonEventTests.send(#"{"add":{"_0":1}}"#, to: "tally/fresh-0", cluster, worker, correlation: 21)
        #expect(released.header.kind == .state, "\(released.text)")
    }
}
