@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import GroveWire
import Testing

/// Issue 21, poison events sent in forms other than the one their machine encodes: the
/// recorder keeps an event run on arrival as the bytes received, and the crash counts and the
/// quarantine still name it by its canonical identity.
@Suite(.timeLimit(.minutes(2)))
struct PoisonEventFormTests {
    typealias Poison = PoisonEventTests

    /// `add(13)` as a client may write it, none of them as the machine's event encodes.
    static let spaced = #"{ "add" : { "_0" : 13 } }"#
    static let indented = "{\n  \"add\": {\"_0\": 13}\n}"
    static let tight = #"{"add":{ "_0":13 }}"#

    /// Runs `json` on `ledger` of a worker that recorded into `log` and returns what the log
    /// held while the event ran (what a process that died in it would leave behind).
    static func recorded(_ json: String, noWait: Bool = false) async throws -> RecordedRun {
        let cluster = InMemoryCluster(topology: Poison.topology)
        let log = MemoryFlightLog()
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { MemoryMachineStore() }, flightLog: log)
        defer { worker.stop() }
        try await Poison.started(worker, in: cluster)
        let header = Header(.event, flags: noWait ? [.noWait] : [], correlation: 1)
        let reply = try await Poison.request(WireMessage(header, address: "ledger", payload: Array(json.utf8)), through: cluster, to: worker)
        #expect(reply.header.kind == (noWait ? .accepted : .state), "\(reply.text)")
        return try #require(log.last)
    }

    /// A worker on `store` whose last process died running `unfinished`.
    static func restarted(after unfinished: RecordedRun, on store: MemoryMachineStore,
                          in cluster: InMemoryCluster) async throws -> InMemoryWorker {
        let log = MemoryFlightLog()
        log.begin(address: unfinished.address, event: unfinished.event, binary: unfinished.binary, origin: unfinished.origin)
        var configuration = WorkerConfiguration()
        configuration.register(LedgerMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { store }, flightLog: log)
        try await Poison.started(worker, in: cluster)
        return worker
    }

    @Test(arguments: [false, true])
    func anEventRunOnArrivalIsRecordedAsTheBytesItArrivedIn(noWait: Bool) async throws {
        let run = try await Self.recorded(Self.spaced, noWait: noWait)
        #expect(run.address == "ledger")
        #expect(run.event == Array(Self.spaced.utf8))
        #expect(!run.binary)
        #expect(run.origin == .sent)
        #expect(run.type == "LedgerMachine")
        #expect(run.correlation != 0, "the id of the request that carried it, for attributing a crash to its sender")
    }

    @Test func aPoisonEventSentAsNonCanonicalJSONIsStillQuarantinedAndThenRefused() async throws {
        let store = MemoryMachineStore()
        let first = try await Self.recorded(Self.spaced)
        let second = try await Self.recorded(Self.indented)
        #expect(first.identity != Poison.poison && second.identity != Poison.poison, "the forms differ from the canonical one")

        let once = try await Self.restarted(after: first, on: store, in: InMemoryCluster(topology: Poison.topology))
        once.stop()
        #expect(try store.crashes().map(\.event) == [Poison.poison], "counted by its canonical identity")

        let cluster = InMemoryCluster(topology: Poison.topology)
        let twice = try await Self.restarted(after: second, on: store, in: cluster)
        defer { twice.stop() }
        let letters = try store.deadLetters()
        try #require(letters.count == 1, "\((try? store.crashes()) ?? [])")
        #expect([letters[0].binary ? 1 : 2] + letters[0].event == Poison.poison)
        #expect(letters[0].crashes == 2)
        #expect(try store.crashes().isEmpty)

        let refused = try await Poison.send(Self.tight, to: "ledger", cluster, twice, correlation: 2)
        #expect(refused.header.kind == .error)
        #expect(try WireJSON.decode(WireError.self, from: refused.payload).code == .quarantined)
        #expect(try await Poison.send(#"{"add":{"_0":2}}"#, to: "ledger", cluster, twice, correlation: 3).header.kind == .state)
    }
}
