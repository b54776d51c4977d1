import Foundation
import Grove
import GroveRuntime
@testable import GroveCluster
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import ZeroMQ
import Testing

/// What a worker publishes of its machine's work in flight (`Hosted+Effects.swift`): the
/// host's changes as `effect` payloads, but io calls placed on other workers, which the
/// coordinator publishes from the calls it forwards.
@Suite(.timeLimit(.minutes(2)))
struct HostedEffectsTests {
    typealias Hosted = GroveWorker.Hosted<TallyMachine>

    @Test func aTimerIsPublishedWithItsIdKindPhaseAndDeadline() throws {
        let deadline = Timestamp(sinceEpoch: .seconds(1_700_000_000) + .milliseconds(250))
        let change = EffectChange(id: .stateTimeout, kind: .timer, phase: .started, deadline: deadline)
        let event = try #require(Hosted.event(change, address: "poller/eu", worker: "main", remoteIO: []))
        #expect(event == LocalEffectEvent(address: "poller/eu", worker: "main", effect: .object(["reserved": .string("state-timeout")]),
                                          kind: .timer, phase: .started, deadlineNs: 1_700_000_000_250_000_000))
        let json = String(decoding: try WireJSON.encode(event), as: UTF8.self)
        #expect(json.contains(#""kind":"timer""#) && json.contains(#""phase":"started""#) && !json.contains("request"), "\(json)")
    }

    @Test func everyPhaseAndKindHasItsName() throws {
        let phases: [EffectChange.Phase] = [.started, .fired, .finished, .failed, .cancelled, .replaced, .ended, .passivated]
        #expect(phases.map { Hosted.phase($0).rawValue } == phases.map(\.rawValue))
        let kinds: [EffectChange.Kind] = [.timer, .operation, .task, .stream, .io]
        #expect(kinds.map { Hosted.kind($0).rawValue } == kinds.map(\.rawValue))
        let generated = try #require(Hosted.event(EffectChange(id: .generated(17), kind: .task, phase: .finished),
                                                  address: "a", worker: "w", remoteIO: []))
        #expect(generated.effect == .integer(17))
    }

    @Test func ioRunLocallyIsPublishedAndIoPlacedElsewhereIsNot() throws {
        let local = EffectChange(id: "poll-fetch", kind: .io, phase: .started, request: "FetchData")
        #expect(Hosted.event(local, address: "poller/eu", worker: "main", remoteIO: [])?.request == "FetchData")
        #expect(Hosted.event(local, address: "poller/eu", worker: "main", remoteIO: ["FetchData"]) == nil,
                "the coordinator publishes a call it forwards")
        #expect(Hosted.event(local, address: "poller/eu", worker: "main", remoteIO: ["Other"]) != nil)
    }
}

/// A machine with a timer: `arm` sets it for an hour under the id `"tick"`.
enum TickMachine: Machine {
    enum Event: Codable, Sendable { case arm, fired }
    struct State: Codable, Sendable { var armed = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch event {
        case .arm:
            state.armed += 1
            return .after(.seconds(3600), id: "tick", send: .fired)
        case .fired:
            return .none
        }
    }
}

/// A real worker runtime behind the coordinator's real driver, no socket: its machines' work is
/// published only while someone watches `effect:<address>`.
@Suite(.timeLimit(.minutes(2)))
struct WorkerEffectPublicationTests {
    static let topology = Topology(
        name: "ticks",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "ticker", type: "TickMachine", worker: "w")],
        heartbeat: .init(intervalMs: 50, timeoutMs: 5000)
    )

    static func effects(_ published: [(topic: String, message: WireMessage)]) throws -> [LocalEffectEvent] {
        try published.filter { $0.topic == "effect:ticker" }.map { try WireJSON.decode(LocalEffectEvent.self, from: $0.message.payload) }
    }

    @Test func aTimerIsPublishedOnlyWhileWatchedAndItsCancelEndsIt() async throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        var configuration = WorkerConfiguration()
        configuration.register(TickMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration)
        defer { worker.stop() }
        worker.start()
        try #require(cluster.settle(worker) { cluster.driver.ready.withLock { $0.all } }, "\(cluster.warnings)")

        // Nobody watches: the timer is armed and nothing is published of it.
        cluster.fromClient("c", .event("ticker", #""arm""#, correlation: 1))
        try #require(cluster.settle(worker) { !cluster.toClient("c").isEmpty })
        #expect(try Self.effects(cluster.published()).isEmpty)

        // A watcher of effect: comes: the worker is told, and publishes what is in flight.
        cluster.loop.receive([Inbound(socket: cluster.events, frames: [[1] + Array("effect:".utf8)])])
        var seen: [LocalEffectEvent] = []
        let started = try await cluster.pump(worker, until: {
            seen += (try? Self.effects(cluster.published())) ?? []
            return !seen.isEmpty
        })
        try #require(started, "no effect published once watched")
        #expect(seen.count == 1)
        let timer = try #require(seen.first)
        #expect(timer.kind == .timer && timer.phase == .started && timer.effect == .string("tick") && timer.worker == "w")
        let deadline = try #require(timer.deadlineNs)
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        #expect(deadline > now + 3_500 * 1_000_000_000 && deadline <= now + 3_600 * 1_000_000_000, "\(deadline) vs \(now)")

        // An admin's cancel ends it.
        cluster.fromClient("c", WireMessage(Header(.cancel, correlation: 2), address: "ticker", payload: Array(#""tick""#.utf8)))
        seen = []
        let cancelled = try await cluster.pump(worker, until: {
            seen += (try? Self.effects(cluster.published())) ?? []
            return !seen.isEmpty
        })
        try #require(cancelled, "no end published for the cancelled timer")
        #expect(seen.map(\.phase) == [.cancelled] && seen.first?.effect == .string("tick"))

        // The watcher goes: arming again publishes nothing.
        cluster.loop.receive([Inbound(socket: cluster.events, frames: [[0] + Array("effect:".utf8)])])
        cluster.settle(worker)
        cluster.fromClient("c", .event("ticker", #""arm""#, correlation: 3))
        try #require(cluster.settle(worker) { cluster.toClient("c").contains { $0.header.correlation == 3 } })
        // A publication would come from a task on the worker's loop: give one a bounded while.
        seen = []
        let published = try await cluster.pump(worker, until: {
            seen += (try? Self.effects(cluster.published())) ?? []
            return !seen.isEmpty
        }, deadline: .milliseconds(300))
        #expect(!published, "\(seen)")
    }
}
