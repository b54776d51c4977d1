import Grove
import GroveRuntime
import Testing

@Suite("Tea dialect in a host", .timeLimit(.minutes(2)))
struct TeaDialectHostTests {
    /// A program whose work fails, with and without `catch:`.
    enum Fragile: TeaProgram {
        enum Action: Equatable, Sendable { case risky, guarded, failed(String) }
        struct Broken: Error {}
        static var initialState: [String] { [] }

        static func reduce(_ state: [String], _ action: Action) -> ([String], Effect) {
            switch action {
            case .risky: (state, .task { throw Broken() })
            case .guarded: (state, .task({ throw Broken() }, catch: { _ in .failed("caught") }))
            case .failed(let message): (state + [message], .none)
            }
        }
    }

    @Test("an error caught with catch: becomes an action and the machine goes on")
    func caughtErrorIsAction() async throws {
        let host = MachineHost(Tea<Fragile>.self)
        host.start()
        try host.send(.guarded)
        #expect(await awaitState(of: host) { $0 == ["caught"] } != nil)
        #expect(await !host.hasEnded)
        await host.stop()
    }

    @Test("an error without catch: fails the machine, and later sends are refused")
    func uncaughtErrorFails() async throws {
        let host = MachineHost(Tea<Fragile>.self)
        try host.send(.risky)
        let error = await #expect(throws: HostError.self) { _ = try await host.run() }
        #expect(error?.code == .effectFailed)
        #expect(error?.underlying is Fragile.Broken)
        #expect(throws: HostError.self) { try host.send(.guarded) }
    }
}
