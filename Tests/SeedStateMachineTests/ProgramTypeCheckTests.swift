import GroveTestSupport
import Testing

/// A machine hosted by type needs transitions that do not await, and its type says so: a
/// `StateMachineProgram` whose transitions await is refused by the compiler, not by a trap when
/// its first host is made. Checked by type-checking two small programs against the Grove module
/// this test binary was built with: the same program compiles without the `await`, so the
/// refusal is the `await`'s, not the set-up's.
@Suite("Seed 003: a program hosted by type cannot await", .timeLimit(.minutes(2)))
struct ProgramTypeCheckTests {
    static func program(transition: String) -> String {
        """
        import Grove
        enum Light: StateMachineProgram {
            enum State: Codable, Sendable { case off, on }
            enum Event: Codable, Sendable { case toggle }
            static var stateMachine: SynchronousStateMachine<State, Event> {
                SynchronousStateMachine(initial: .off) { state, event in
                    \(transition)
                }
            }
        }
        """
    }

    @Test("a program whose transitions await does not compile; without the await it does")
    func awaitingTransitionsDoNotCompile() async throws {
        let synchronous = try await typeCheck(Self.program(transition: "return .newState(state == .off ? .on : .off)"))
        #expect(synchronous.status == 0, "the synchronous program should compile: \(synchronous.output)")

        let awaiting = try await typeCheck(Self.program(transition: "await Task.yield()\n return .newState(.on)"))
        #expect(awaiting.status != 0, "a program whose transitions await compiled")
        #expect(awaiting.output.contains("synchronous"), "\(awaiting.output)")
    }
}
