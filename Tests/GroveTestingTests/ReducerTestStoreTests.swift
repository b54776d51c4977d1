import Grove
import GroveTesting
import Testing

/// A SwiftTea reducer as a free function with an environment, as seed 002 writes them.
struct TallyState: Equatable, Sendable { var count = 0; var saved: Int? }
enum TallyAction: Equatable, Sendable { case add(Int), save, saved(Int), ignored }
struct TallyEnvironment: Sendable { var store: @Sendable (Int) async -> Int }

func tallyReducer(state: TallyState, action: TallyAction, environment: TallyEnvironment) -> (TallyState, TeaEffect<TallyAction, Void>) {
    var next = state
    switch action {
    case .add(let amount):
        next.count += amount
        return (next, .none)
    case .save:
        let count = state.count
        return (state, .task { .saved(await environment.store(count)) })
    case .saved(let stored):
        next.saved = stored
        return (next, .none)
    case .ignored:
        return (state, .unhandled)
    }
}

@Suite("Reducer test store", .timeLimit(.minutes(2)))
struct ReducerTestStoreTests {
    let environment = TallyEnvironment { $0 * 10 }

    @Test func aReducerRunsWithTheStoresArgumentsAndItsStateIsAsserted() async {
        let store = ReducerTestStore(initialState: TallyState(), reduce: tallyReducer, environment: environment)
        await store.send(.add(2)) { $0.count = 2 }
        await store.send(.save)
        await store.receive(.saved(20)) { $0.saved = 20 }
        await store.sendUnhandled(.ignored)
        #expect(store.state == TallyState(count: 2, saved: 20))
        await store.finish()
    }

    /// What `TestStore` would report, reported for the user's state: a wrong expectation, an
    /// action left unreceived.
    @Test func itReportsWhatTestStoreReportsInTheUsersTerms() async {
        let reported = Reported()
        let store = ReducerTestStore(initialState: TallyState(), reduce: tallyReducer, environment: environment,
                                     reportIssue: { reported.record($0, $1) })
        await store.send(.add(2)) { $0.count = 3 }
        await store.send(.save)
        await store.finish()
        #expect(reported.messages.count == 2, "\(reported.messages)")
        #expect(reported.messages.first == """
            state after add(2) differs from the expected one (- expected, + actual):
                TallyState(
              -   count: 3,
              +   count: 2,
                  saved: nil
                )
            """)
        #expect(reported.messages.last?.contains("saved(20)") == true, "\(reported.messages)")
    }
}
