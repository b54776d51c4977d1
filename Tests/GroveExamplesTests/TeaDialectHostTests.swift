import Grove
import GroveRuntime
import GroveTesting
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

    @Test("an error without catch: is logged and the machine goes on (errors are events, not stops)")
    func uncaughtErrorIsLogged() async throws {
        let store = TestStore(Tea<Fragile>.self)
        await store.send(.risky)
        let error = await store.receiveFailure()
        #expect(error is Fragile.Broken)
        await store.send(.guarded)
        await store.receive(.failed("caught")) { $0 = ["caught"] }
        await store.finish()
    }
}
