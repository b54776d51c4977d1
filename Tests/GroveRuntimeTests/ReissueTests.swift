import Testing
import Foundation
import Grove
import GroveRuntime
import Synchronization

/// Issue 21, recovery: io in flight comes back as its request type declares. A `.reissue`
/// request is sent again by the restored host, under its id, made by the transition that
/// started it; a `.fail` one (the default) is heard as `interrupted`.
@Suite("Re-issued io", .timeLimit(.minutes(2)))
struct ReissueTests {
    /// A host of `Pager` whose snapshots carry re-issued io, on `calls`.
    private func host(_ calls: HeldCalls, restoring snapshot: Snapshot<Pager>? = nil, reissuesIO: Bool = true) -> MachineHost<Pager> {
        var options = HostOptions<Pager>()
        options.reissuesIO = reissuesIO
        return MachineHost(machine: Pager.self, env: (), initialState: snapshot?.state, performer: calls, clock: WallClock(),
                           options: options, logger: nil, restoring: snapshot)
    }

    /// Through JSON, as a record written to disk would be.
    private func roundTrip(_ snapshot: Snapshot<Pager>) throws -> Snapshot<Pager> {
        try JSONDecoder().decode(Snapshot<Pager>.self, from: JSONEncoder().encode(snapshot))
    }

    /// `Pager` fetching page 1 under "fetch", its snapshot taken (through JSON) and the host stopped.
    private func snapshotFetchingPageOne() async throws -> Snapshot<Pager> {
        let calls = HeldCalls()
        let original = host(calls)
        original.start()
        #expect(try await original.sendAndWait(.fetch) == Pager.State(page: 1, phase: .fetching))
        let first = try await calls.next()
        #expect(first.id == "fetch" && first.request == "page 1")
        let snapshot = try roundTrip(await original.snapshot())
        await original.stop()
        return snapshot
    }

    @Test("A restored host sends a re-issuable request again under its id, and maps its result")
    func reissuedUnderItsID() async throws {
        let snapshot = try await snapshotFetchingPageOne()
        #expect(snapshot.reissuedIO?.map(\.id) == ["fetch"])
        #expect(snapshot.interruptedIO.isEmpty, "a re-issued request is not also interrupted")
        #expect(snapshot.omittedEffects.isEmpty)

        let calls = HeldCalls()
        let restored = host(calls, restoring: snapshot)
        restored.start()
        await restored.flush()
        let again = try await calls.next()
        // The request the transition made from the state before it: page 1, not page 2.
        #expect(again.id == "fetch")
        #expect(again.request == "page 1")
        again.answer(.success("three items"))
        try await eventually("the result to commit") { await restored.state == Pager.State(page: 1, phase: .got("three items")) }
        #expect(calls.count == 1, "sent once after the restore")
    }

    @Test("A re-issued request still in flight is carried again by the restored host's snapshot")
    func reissuedSurvivesASecondRestart() async throws {
        let calls = HeldCalls()
        let restored = host(calls, restoring: try await snapshotFetchingPageOne())
        // Before it first ran, then after it sent the request again.
        #expect(try roundTrip(await restored.snapshot()).reissuedIO?.map(\.id) == ["fetch"])
        #expect(await restored.holdsOnlyState == false)
        restored.start()
        await restored.flush()
        _ = try await calls.next()
        let second = try roundTrip(await restored.snapshot())
        await restored.stop()
        #expect(second.reissuedIO?.map(\.id) == ["fetch"])

        let thirdCalls = HeldCalls()
        let third = host(thirdCalls, restoring: second)
        third.start()
        await third.flush()
        #expect(try await thirdCalls.next().request == "page 1")
    }

    @Test("A cancel of the original id reaches the re-issued request; its late result is dropped")
    func cancelReachesTheReissuedRequest() async throws {
        let calls = HeldCalls()
        let restored = host(calls, restoring: try await snapshotFetchingPageOne())
        restored.start()
        await restored.flush()
        let again = try await calls.next()
        #expect(try await restored.sendAndWait(.giveUp) == Pager.State(page: 1, phase: .idle))
        try await eventually("the request to be cancelled") { again.wasCancelled }
        again.answer(.success("too late"))
        // The answer was posted; a flush after it has processed whatever it delivered.
        try await eventually("the late result to be dropped") { await restored.inFlightEffects.isEmpty }
        await restored.flush()
        #expect(await restored.state == Pager.State(page: 1, phase: .idle))
    }

    @Test("A request of a .fail type is heard as interrupted, and not sent again")
    func failTypeHearsInterrupted() async throws {
        let calls = HeldCalls()
        let original = host(calls)
        original.start()
        _ = try await original.sendAndWait(.charge)
        _ = try await calls.next()
        let snapshot = try roundTrip(await original.snapshot())
        await original.stop()
        #expect(snapshot.interruptedIO.map(\.id) == ["charge"])
        #expect(snapshot.reissuedIO == nil)

        let again = HeldCalls()
        let restored = host(again, restoring: snapshot)
        restored.start()
        await restored.flush()
        #expect(await restored.state == Pager.State(page: 0, phase: .failed("interrupted")))
        #expect(again.count == 0)
    }

    @Test("Without HostOptions.reissuesIO a re-issuable request is carried as interrupted")
    func withoutTheOptionItIsInterrupted() async throws {
        let calls = HeldCalls()
        let original = host(calls, reissuesIO: false)
        original.start()
        _ = try await original.sendAndWait(.fetch)
        _ = try await calls.next()
        let snapshot = try roundTrip(await original.snapshot())
        await original.stop()
        #expect(snapshot.interruptedIO.map(\.id) == ["fetch"])
        #expect(snapshot.reissuedIO == nil)
    }

    @Test("A re-issued request the transition no longer gives is heard as interrupted")
    func underivableBecomesInterrupted() async throws {
        var snapshot = try await snapshotFetchingPageOne()
        snapshot.reissuedIO?[0].event = .giveUp // as if update no longer started the fetch for it
        let calls = HeldCalls()
        let restored = host(calls, restoring: snapshot)
        restored.start()
        await restored.flush()
        #expect(await restored.state == Pager.State(page: 1, phase: .failed("interrupted")))
        #expect(calls.count == 0)
    }

    @Test("Requests inside an anonymous merge are found again by their place in it")
    func mergedRequestsKeepTheirPlace() async throws {
        let calls = HeldCalls()
        let original = host(calls)
        original.start()
        _ = try await original.sendAndWait(.fetchTwo)
        _ = try await calls.next()
        _ = try await calls.next()
        let snapshot = try roundTrip(await original.snapshot())
        await original.stop()
        #expect(snapshot.reissuedIO?.map(\.id) == ["left", "right"])
        #expect(snapshot.reissuedIO?.map(\.ordinal) == [0, 1])
        #expect(snapshot.interruptedIO.map(\.id) == ["charge"])

        let again = HeldCalls()
        let restored = host(again, restoring: snapshot)
        restored.start()
        await restored.flush()
        let sent = [try await again.next(), try await again.next()]
        #expect(Set(sent.map { "\($0.id)=\($0.request)" }) == ["left=page 1", "right=page 2"])
    }
}

/// Fetches pages (`FetchPage`, re-issued) and charges (`Charge`, failed when interrupted).
private enum Pager: Machine {
    struct State: Codable, Sendable, Equatable {
        var page: Int
        var phase: Phase
    }

    enum Phase: Codable, Sendable, Equatable {
        case idle, fetching
        case got(String)
        case failed(String)
    }

    enum Event: Codable, Sendable, Equatable {
        case fetch, fetchTwo, charge, giveUp
        case result(String)
        case failure(code: String)
    }

    static var initialState: State { State(page: 0, phase: .idle) }
    static var startsReissuableIO: Bool { true }

    static func update(_ state: inout State, event: Event) -> Effect {
        switch (state.phase, event) {
        case (.idle, .fetch):
            // The request is built from the state before the transition: a restore that ran
            // it on the state after would ask for page 2.
            state.page += 1
            state.phase = .fetching
            return .io(id: "fetch", FetchPage(page: state.page), result: map)
        case (.idle, .fetchTwo):
            state.phase = .fetching
            return .merge([.io(id: "left", FetchPage(page: state.page + 1), result: map),
                           .io(id: "charge", Charge(), result: map),
                           .merge([.io(id: "right", FetchPage(page: state.page + 2), result: map)])])
        case (.idle, .charge):
            state.phase = .fetching
            return .io(id: "charge", Charge(), result: map)
        case (.fetching, .giveUp):
            state.phase = .idle
            return .cancel("fetch")
        case (.fetching, .result(let text)):
            state.phase = .got(text)
        case (.fetching, .failure(let code)):
            state.phase = .failed(code)
        default:
            return .unhandled
        }
        return .none
    }

    @Sendable static func map(_ result: Result<String, IOFailure>) -> Event {
        switch result {
        case .success(let text): .result(text)
        case .failure(let failure): .failure(code: failure.code.rawValue)
        }
    }
}

private struct FetchPage: IORequest, CustomStringConvertible {
    typealias Response = String
    static var onInterruption: IOInterruption { .reissue }
    var page: Int
    var description: String { "page \(page)" }
}

private struct Charge: IORequest, CustomStringConvertible {
    typealias Response = String
    var description: String { "charge" }
}

/// An io performer whose calls wait until the test answers them; it notes each call's effect id
/// and whether it was cancelled.
private final class HeldCalls: IOPerformer, Sendable {
    final class Call: Sendable {
        let id: EffectID
        let request: String
        private let state = Mutex<(answer: CheckedContinuation<Result<String, IOFailure>, Never>?, early: Result<String, IOFailure>?, cancelled: Bool)>(
            (nil, nil, false))

        init(id: EffectID, request: String) {
            self.id = id
            self.request = request
        }

        var wasCancelled: Bool { state.withLock { $0.cancelled } }

        func answer(_ result: Result<String, IOFailure>) {
            let waiter = state.withLock { state in
                guard let waiter = state.answer else {
                    state.early = result
                    return nil as CheckedContinuation<Result<String, IOFailure>, Never>?
                }
                state.answer = nil
                return waiter
            }
            waiter?.resume(returning: result)
        }

        func wait() async -> Result<String, IOFailure> {
            await withTaskCancellationHandler {
                await withCheckedContinuation { waiter in
                    let early = self.state.withLock { state -> Result<String, IOFailure>? in
                        if let early = state.early { return early }
                        state.answer = waiter
                        return nil
                    }
                    if let early { waiter.resume(returning: early) }
                }
            } onCancel: {
                // Like work that swallows cancellation: noted, not answered.
                self.state.withLock { $0.cancelled = true }
            }
        }
    }

    private let calls = Mutex<(made: [Call], taken: Int)>(([], 0))

    var count: Int { calls.withLock { $0.made.count } }

    func perform<R: IORequest>(_ request: R) async -> Result<R.Response, IOFailure> {
        .failure(IOFailure(.noHandler, "HeldCalls needs the effect id"))
    }

    func perform<R: IORequest>(_ request: R, effect: EffectID) async -> Result<R.Response, IOFailure> {
        let call = Call(id: effect, request: "\(request)")
        calls.withLock { $0.made.append(call) }
        return await call.wait().map { $0 as! R.Response }
    }

    /// The next call made, in order, within 20 s.
    func next() async throws -> Call {
        var call: Call?
        try await eventually("an io call") {
            call = calls.withLock { calls in
                guard calls.taken < calls.made.count else { return nil }
                calls.taken += 1
                return calls.made[calls.taken - 1]
            }
            return call != nil
        }
        return call!
    }
}

private struct Timeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "gave up waiting for \(what) after 20 s" }
}

/// Waits until `condition` holds, checking every 5 ms for at most 20 s (generous: the unit
/// suite runs long CPU-bound tests beside this one on two cores).
private func eventually(_ what: String, _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw Timeout(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}
