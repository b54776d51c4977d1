import Foundation
import Grove
import GroveRuntime
import GroveTesting
import Testing

/// A StateMachinePackage program whose transitions await, hosted by type
/// (`AwaitingStateMachine`): events wait in order behind a running transition, each runs from
/// the state the one before committed, and a restored transition runs again.
@Suite(.timeLimit(.minutes(2)))
struct AwaitingStateMachineTests {
    /// Appends each loaded id to its state, once the gate named after the id opens.
    enum GatedLog: AwaitingStateMachineProgram {
        enum Event: Codable, Equatable, Sendable { case load(String) }
        static let gate = Gate()

        static var stateMachine: StateMachine<[String], Event> {
            StateMachine(initial: []) { state, event async in
                switch event {
                case .load(let id):
                    await gate.wait(id)
                    return .newState(state + [id])
                }
            }
        }
    }

    /// The same machine, synchronous: hosted inline, as a `StaticStateMachine`.
    enum InlineLog: AwaitingStateMachineProgram {
        static var stateMachine: StateMachine<[String], GatedLog.Event> {
            StateMachine(initial: []) { state, event in
                switch event {
                case .load(let id): .newState(state + [id])
                }
            }
        }
    }

    typealias Gated = AwaitingStateMachine<GatedLog>

    @Test func eventsThatArriveDuringATransitionWaitInOrderAndEachStartsFromTheCommittedState() async {
        let store = TestStore(Gated.self)
        // A transition's task can wait long for a thread in a saturated full run (DIALECTS.md).
        store.timeout = .seconds(45)
        await store.send(.event(.load("a1"))) {
            $0.inTransition = .load("a1")
            $0.started = 1
        }
        await store.send(.event(.load("b1"))) { $0.waiting = [.load("b1")] }
        await store.send(.event(.load("c1"))) { $0.waiting = [.load("b1"), .load("c1")] }
        // The later ones' gates open first: they still run after a1, one at a time.
        GatedLog.gate.open("c1")
        GatedLog.gate.open("b1")
        GatedLog.gate.open("a1")
        await store.receive(.transitioned(.newState(["a1"]), event: .load("a1"), run: 1)) {
            $0.current = ["a1"]
            $0.inTransition = .load("b1")
            $0.waiting = [.load("c1")]
            $0.started = 2
        }
        await store.receive(.transitioned(.newState(["a1", "b1"]), event: .load("b1"), run: 2)) {
            $0.current = ["a1", "b1"]
            $0.inTransition = .load("c1")
            $0.waiting = []
            $0.started = 3
        }
        await store.receive(.transitioned(.newState(["a1", "b1", "c1"]), event: .load("c1"), run: 3)) {
            $0.current = ["a1", "b1", "c1"]
            $0.inTransition = nil
        }
        await store.finish()
    }

    @Test func synchronousTransitionsRunInlineWithoutATask() async {
        let store = TestStore(AwaitingStateMachine<InlineLog>.self)
        await store.send(.event(.load("x"))) { $0.current = ["x"] }
        await store.send(.event(.load("y"))) { $0.current = ["x", "y"] }
        await store.finish()
    }

    @Test func aRestoredTransitionRunsAgainAndTheResultOfTheRunBeforeIsIgnored() async throws {
        // Restored with r1 in transition (run 1) and that run's late result queued.
        var snapshot = Snapshot<Gated>(state: AwaitingState(["r0"], inTransition: .load("r1"), waiting: [.load("r2")], started: 1))
        snapshot.queuedEvents = [.transitioned(.newState(["stale"]), event: .load("r1"), run: 1)]
        let host = MachineHost(restoring: snapshot)
        host.start()
        GatedLog.gate.open("r1")
        GatedLog.gate.open("r2")
        let done = await host.firstState(within: .seconds(45)) { $0.current.count == 3 && $0.inTransition == nil }
        #expect(done == AwaitingState(["r0", "r1", "r2"], started: 3))
        await host.stop()
    }

    @Test func theProgramsEventsCrossAsThemselvesAndTheMachinesOwnStepsAreRefusedFromOutside() throws {
        let event = Gated.Event.event(.load("a"))
        #expect(String(decoding: try JSONEncoder().encode(event), as: UTF8.self) == #"{"load":{"_0":"a"}}"#)
        #expect(try JSONDecoder().decode(Gated.Event.self, from: Data(#"{"load":{"_0":"a"}}"#.utf8)) == event)
        let result = Gated.Event.transitioned(.newState(["a"]), event: .load("a"), run: 2)
        #expect(try JSONDecoder().decode(Gated.Event.self, from: try JSONEncoder().encode(result)) == result)
        #expect(try JSONDecoder().decode(Gated.Event.self, from: try JSONEncoder().encode(Gated.Event.restarted)) == .restarted)
        #expect(Gated.refusal(of: event) == nil)
        #expect(Gated.refusal(of: result)?.contains("send one of the program's events") == true)
        #expect(Gated.eventsAfterRestore(AwaitingState([], inTransition: .load("a"), started: 1)) == [.restarted])
        #expect(Gated.eventsAfterRestore(AwaitingState([])).isEmpty)
    }
}
