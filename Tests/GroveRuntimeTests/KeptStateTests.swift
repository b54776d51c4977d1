import Testing
import Grove
import GroveRuntime

/// `HostOptions.reissuesIO` keeps the state before each event only for machine types that
/// declare `startsReissuableIO`: keeping it while `update` changes a buffer of the state would
/// copy that buffer whole on every event. A re-issuable request from a machine that did not
/// declare it is carried as interrupted, and reported.
@Suite(.timeLimit(.minutes(2)))
struct KeptStateTests {
    @Test("A machine that does not declare startsReissuableIO changes its state in place")
    func undeclaredKeepsNoCopy() async throws {
        #expect(try await uniqueDuringUpdate(Undeclared.self, reissuesIO: true) == true)
    }

    @Test("A machine that declares it has its state kept: the buffer is shared during update")
    func declaredKeepsTheStateBefore() async throws {
        #expect(try await uniqueDuringUpdate(Declared.self, reissuesIO: true) == false)
        #expect(try await uniqueDuringUpdate(Declared.self, reissuesIO: false) == true)
    }

    @Test("An undeclared machine's re-issuable request is carried as interrupted, and reported")
    func undeclaredRequestIsInterruptedAndReported() async throws {
        let (snapshot, diagnostics) = try await snapshotWhileFetching(Undeclared.self, reissuesIO: true)
        #expect(snapshot.interruptedIO.map(\.id) == ["fetch"])
        #expect(snapshot.reissuedIO == nil)
        #expect(diagnostics == ["fetch"])
    }

    @Test("The same request from a declared machine is carried to be sent again, unreported")
    func declaredRequestIsReissued() async throws {
        let (snapshot, diagnostics) = try await snapshotWhileFetching(Declared.self, reissuesIO: true)
        #expect(snapshot.reissuedIO?.map(\.id) == ["fetch"])
        #expect(snapshot.interruptedIO.isEmpty)
        #expect(diagnostics.isEmpty)
    }

    @Test("A host that keeps no causes reports nothing: its requests are interrupted by choice")
    func withoutTheOptionNothingIsReported() async throws {
        let (snapshot, diagnostics) = try await snapshotWhileFetching(Undeclared.self, reissuesIO: false)
        #expect(snapshot.interruptedIO.map(\.id) == ["fetch"])
        #expect(diagnostics.isEmpty)
    }

    /// Whether the first event's `update` held the only reference to the state's buffer.
    private func uniqueDuringUpdate<M: Machine>(_ machine: M.Type, reissuesIO: Bool) async throws -> Bool?
    where M.State == Sharing, M.Event == SharingEvent, M.Env == Void {
        var options = HostOptions<M>()
        options.reissuesIO = reissuesIO
        let host = MachineHost(M.self, options: options)
        host.start()
        let state = try await host.sendAndWait(.look)
        await host.stop()
        return state.wasUnique
    }

    /// The snapshot of a host whose fetch is in flight, and the effect ids of the
    /// `reissueNotKept` diagnostics it reported.
    private func snapshotWhileFetching<M: Machine>(_ machine: M.Type, reissuesIO: Bool) async throws
    -> (Snapshot<M>, [EffectID]) where M.State == Sharing, M.Event == SharingEvent, M.Env == Void {
        let reported = Gate.Box<[EffectID]>([])
        var options = HostOptions<M>(diagnostics: { diagnostic in
            if case .reissueNotKept(let id, let request) = diagnostic, request == Refresh.name {
                reported.mutate { $0.append(id) }
            }
        })
        options.reissuesIO = reissuesIO
        var handlers = IOHandlers()
        handlers.register(Refresh.self) { _ in
            try await Task.sleep(for: .seconds(3600))
            return 0
        }
        let host = MachineHost(M.self, io: handlers, options: options)
        host.start()
        _ = try await host.sendAndWait(.fetch)
        let snapshot = await host.snapshot()
        await host.stop()
        return (snapshot, reported.value)
    }
}

/// A class instance in the state: `update` can tell whether anything else holds it.
private final class Buffer: Sendable {}

private struct Sharing: Sendable {
    var buffer = Buffer()
    /// Whether the last `look` found the buffer referenced by the state alone.
    var wasUnique: Bool?
}

private enum SharingEvent: Sendable {
    case look, fetch, fetched
}

private struct Refresh: IORequest {
    typealias Response = Int
    static var onInterruption: IOInterruption { .reissue }
}

private func sharingUpdate<M: Machine>(_ state: inout Sharing, _ event: SharingEvent) -> MachineEffect<M>
where M.Event == SharingEvent {
    switch event {
    case .look:
        state.wasUnique = isKnownUniquelyReferenced(&state.buffer)
        return .none
    case .fetch:
        return .io(id: "fetch", Refresh()) { _ in .fetched }
    case .fetched:
        return .none
    }
}

private enum Undeclared: Machine {
    static var initialState: Sharing { Sharing() }
    static func update(_ state: inout Sharing, event: SharingEvent) -> Effect { sharingUpdate(&state, event) }
}

private enum Declared: Machine {
    static var initialState: Sharing { Sharing() }
    static var startsReissuableIO: Bool { true }
    static func update(_ state: inout Sharing, event: SharingEvent) -> Effect { sharingUpdate(&state, event) }
}
