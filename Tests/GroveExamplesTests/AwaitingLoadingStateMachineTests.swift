import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

/// Seed 003's loader with the load awaited in its transition, hosted by type in a TestStore: the
/// request is answered with the state before and the request in transition, the load's result
/// commits when it returns (`GroveRuntimeTests/AwaitingStateMachineTests` shows events waiting
/// behind it).
@Suite(.timeLimit(.minutes(2)))
struct AwaitingLoadingStateMachineTests {
    typealias Loader = AwaitingStateMachine<AwaitingLoadingStateMachine>

    @Test func theLoadCommitsWhenItReturnsAndARequestFromLoadedKeepsTheState() async {
        let store = TestStore(Loader.self)
        store.timeout = .seconds(45)
        await store.send(.event(.loadingWasRequested(id: "3"))) {
            $0.inTransition = .loadingWasRequested(id: "3")
            $0.started = 1
        }
        await store.receive(.transitioned(.newState(.loaded(value: 30)), event: .loadingWasRequested(id: "3"), run: 1)) {
            $0.current = .loaded(value: 30)
            $0.inTransition = nil
        }
        // From `loaded` the transition answers `sameState()`: the state stays, the transition ends.
        await store.send(.event(.loadingWasRequested(id: "4"))) {
            $0.inTransition = .loadingWasRequested(id: "4")
            $0.started = 2
        }
        await store.receive(.transitioned(.sameState(), event: .loadingWasRequested(id: "4"), run: 2)) {
            $0.inTransition = nil
        }
        await store.finish()
    }

    @Test func aFailedLoadCommitsItsMessage() async throws {
        let store = TestStore(Loader.self)
        store.timeout = .seconds(45)
        await store.send(.event(.loadingWasRequested(id: "three"))) {
            $0.inTransition = .loadingWasRequested(id: "three")
            $0.started = 1
        }
        let message = "no value for id 'three': the demo loader knows numbers only"
        await store.receive(.transitioned(.newState(.failed(message: message)), event: .loadingWasRequested(id: "three"), run: 1)) {
            $0.current = .failed(message: message)
            $0.inTransition = nil
        }
        await store.finish()
    }
}
