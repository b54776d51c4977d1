// Seed 004, TCA-SM: "Why Static vs Instance Methods", as written between `// Seed text` and
// `// End of seed text`, with two changes (marked): the key path reads `\\.locationManager`
// (markdown's escaping; Swift's is `\.`), and `reduceInput`'s body is `{ ... }`, which is not
// Swift, so it has the reader's body. The feature's states, inputs and `reduceIOResult` are the
// reader's (the extension below), as are `APIService` and `LocationManager` (ReaderTypes.swift).
// `StateMachine` is GroveTCA's, TCA-SM's `Reducer`; `@Dependency` is swift-dependencies'.
import Dependencies
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

// Seed text
struct MyFeature : StateMachine {
    @Dependency(\.locationManager) var locationManager  // Available in runIOEffect
    let apiService: any APIService                      // Available in runIOEffect

    // Static = pure, no dependencies access
    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        // changed: the seed's body is `...`; the reader's:
        switch (state, input) {
        case (.idle, .load), (.loaded, .load): return transition(.loading, effect: .fetchData)
        default: return undefined
        }
    }

    // Instance = can access dependencies for side effects
    func runIOEffect(_ ioEffect: IOEffect) async -> IOResult? {
        await apiService.fetchData()  // ✅ Can access instance properties
    }
}
// End of seed text

extension MyFeature {
    enum State: Equatable, Codable { case idle, loading, loaded(String) }
    enum Input: Codable { case load }
    enum IOEffect: Equatable { case fetchData }
    enum IOResult: Equatable, Codable { case dataFetched(String) }

    static var initialState: State { .idle }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.loading, .dataFetched(let data)): return nextState(.loaded(data))
        default: return undefined
        }
    }
}
