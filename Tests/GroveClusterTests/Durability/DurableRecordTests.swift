@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import Grove
import GroveRuntime
import GroveWire
import Testing

/// The stored record's format: records with io to re-issue under codec bytes of their own,
/// every other record as it was, so stores written before still open.
@Suite(.timeLimit(.minutes(2)))
struct DurableRecordTests {
    /// A snapshot of `Refetcher` with its fetch in flight, on a host that keeps causes or not.
    private func fetching(reissuesIO: Bool) async throws -> Snapshot<Refetcher> {
        var options = HostOptions<Refetcher>()
        options.reissuesIO = reissuesIO
        let host = MachineHost(machine: Refetcher.self, env: (), initialState: nil, performer: NeverAnswers(), clock: WallClock(),
                               options: options, logger: nil)
        host.start()
        _ = try await host.sendAndWait(.fetch)
        let snapshot = await host.snapshot()
        await host.stop()
        return snapshot
    }

    @Test func aRecordWithReissuedIOHasItsOwnCodecByteAndComesBack() async throws {
        let bytes = try DurableRecord.encode(try await fetching(reissuesIO: true))
        #expect(bytes.first == 4)
        let decoded = try DurableRecord.decode(bytes, as: Refetcher.self)
        #expect(decoded.reissuedIO?.map(\.id) == ["refetch"])
        #expect(decoded.reissuedIO?.first?.stateBefore == 0)
        #expect(decoded.reissuedIO?.first?.event == .fetch)
        #expect(decoded.state == 1)
    }

    @Test func aRecordWithoutReissuedIOKeepsTheFormerBytes() async throws {
        let bytes = try DurableRecord.encode(try await fetching(reissuesIO: false))
        #expect(bytes.first == 1)
        // What a worker from before re-issue wrote: the same fields, no `reissuedIO`.
        let former = FormerSnapshot(state: 1, timers: [], interruptedIO: [.init(id: "refetch", event: .failed("interrupted"))],
                                    queuedEvents: [], omittedEffects: [])
        var formerBytes: [UInt8] = [1]
        try BinaryCodec.encode(former, into: &formerBytes)
        #expect(bytes == formerBytes)
        let decoded = try DurableRecord.decode(formerBytes, as: Refetcher.self)
        #expect(decoded.interruptedIO.map(\.id) == ["refetch"])
        #expect(decoded.reissuedIO == nil)
        #expect(decoded.postponed == nil, "a record from before postpone holds none")
        let formerJSON: [UInt8] = [2] + Array(try JSONEncoder().encode(former))
        #expect(try DurableRecord.decode(formerJSON, as: Refetcher.self).interruptedIO.map(\.event) == [.failed("interrupted")])
    }

    @Test func aRecordHoldingReservedTimerIdsComesBackFromTheBinaryCodec() async throws {
        let host = MachineHost(Asker.self, clock: WallClock())
        host.start()
        _ = try await host.sendAndWait(.ask)
        let snapshot = await host.snapshot()
        await host.stop()
        let bytes = try DurableRecord.encode(snapshot)
        #expect(bytes.first == 1, "the binary codec, not JSON")
        let decoded = try DurableRecord.decode(bytes, as: Asker.self)
        #expect(decoded.timers.map(\.id) == snapshot.timers.map(\.id))
        #expect(Set(decoded.timers.map(\.id)) == [.stateTimeout, .eventTimeout])
        #expect(decoded.timers.map(\.deadline) == snapshot.timers.map(\.deadline))
        #expect(decoded.timers.map(\.event) == snapshot.timers.map(\.event))
        #expect(decoded.state == .asking)
    }

    @Test func aRecordWithPostponedEventsHasItsOwnCodecByteAndComesBack() async throws {
        let host = MachineHost(Keeper.self)
        host.start()
        _ = try await host.sendAndWait(.open)
        _ = try await host.sendAndWait(.note("a"))
        _ = try await host.sendAndWait(.close)
        _ = try await host.sendAndWait(.note("b"))
        let snapshot = await host.snapshot()
        await host.stop()
        #expect(!(await host.holdsOnlyState), "postponed events are more than the state")
        let bytes = try DurableRecord.encode(snapshot)
        #expect(bytes.first == 6, "a Grove from before postpone refuses it instead of dropping them")
        let decoded = try DurableRecord.decode(bytes, as: Keeper.self)
        #expect(decoded.postponed == [.note("b")])
        #expect(decoded.state == .closed(notes: ["a"]))
    }

    @Test func anUnknownCodecByteIsRefusedNamingANewerGrove() {
        let error = #expect(throws: WireError.self) { try DurableRecord.decode([8, 0], as: Refetcher.self) }
        #expect(error?.message.contains("written by a newer Grove") == true, "\(String(describing: error))")
    }
}

/// Counts fetches; its one request re-issues.
private enum Refetcher: Machine {
    static var startsReissuableIO: Bool { true }

    enum Event: Codable, Sendable, Equatable {
        case fetch
        case fetched(String)
        case failed(String)
    }

    static var initialState: Int { 0 }

    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .fetch:
            state += 1
            return .io(id: "refetch", Refetch()) { result in
                switch result {
                case .success(let text): .fetched(text)
                case .failure(let failure): .failed(failure.code.rawValue)
                }
            }
        case .fetched, .failed:
            return .none
        }
    }
}

private struct Refetch: IORequest {
    typealias Response = String
    static var onInterruption: IOInterruption { .reissue }
}

/// `Snapshot<Refetcher>` as it was coded before `reissuedIO`.
private struct FormerSnapshot: Codable {
    struct Interrupted: Codable {
        var id: EffectID
        var event: Refetcher.Event
    }

    var state: Int
    var timers: [Int]
    var interruptedIO: [Interrupted]
    var queuedEvents: [Refetcher.Event]
    var omittedEffects: [EffectID]
}

/// A performer whose requests never finish (until cancelled).
private struct NeverAnswers: IOPerformer {
    func perform<R: IORequest>(_ request: R) async -> Result<R.Response, IOFailure> {
        try? await Task.sleep(for: .seconds(3600))
        return .failure(IOFailure(.interrupted, "cancelled"))
    }
}

/// Asks with a state timeout and an event timeout pending: timers under both reserved ids.
private enum Asker: StateScoped {
    enum State: Codable, Sendable, Equatable { case idle, asking }
    enum Event: Codable, Sendable, Equatable { case ask, tooLate, quiet }
    static var initialState: State { .idle }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.idle, .ask):
            state = .asking
            return .merge([.stateTimeout(after: .seconds(60), send: .tooLate),
                           .eventTimeout(after: .seconds(30), send: .quiet)])
        case (.asking, .tooLate), (.asking, .quiet):
            state = .idle
            return .none
        case (.idle, .tooLate), (.idle, .quiet), (.asking, .ask):
            return .unhandled
        }
    }
}

/// Takes notes while open; closed, it postpones them until it opens again.
enum Keeper: StateScoped {
    enum State: Codable, Sendable, Equatable { case open(notes: [String]), closed(notes: [String]) }
    enum Event: Codable, Sendable, Equatable { case open, close, note(String) }
    static var initialState: State { .closed(notes: []) }
    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state, event) {
        case (.closed(let notes), .open):
            state = .open(notes: notes)
            return .none
        case (.open(let notes), .close):
            state = .closed(notes: notes)
            return .none
        case (.open(let notes), .note(let text)):
            state = .open(notes: notes + [text])
            return .none
        case (.closed, .note):
            return .postpone
        case (.open, .open), (.closed, .close):
            return .unhandled
        }
    }
}
