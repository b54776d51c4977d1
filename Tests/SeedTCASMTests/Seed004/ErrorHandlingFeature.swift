// Seed 004, TCA-SM: "4. Deterministic Error Handling", as written inside a feature of the
// reader's, between `// Seed text` and `// End of seed text`. `NetworkError`, `DatabaseError` and
// the feature's `api` are the reader's. The "Never:" line is the seed's counter-example, a bare
// declaration without a body: it stays a comment, and `IOStateMachine` refuses such a function
// (its `runIOEffect` does not throw; see `throwingRunIOEffectDoesNotConform`).
import Foundation
import Grove

struct ErrorHandlingFeature: StateMachine {
    enum State: Equatable {
        case idle
        case loading
        case loaded(Data)
        case saving(Data)
        case saved(Data)
        case loadFailed(NetworkError)
        case saveFailed(Data, DatabaseError)
    }
    enum Input { case load, save }
    enum IOEffect: Equatable { case loadData, saveUser(Data) }

    // Seed text
    enum IOResult {
        case dataLoaded(Result<Data, NetworkError>)
        case userSaved(Result<Void, DatabaseError>)
    }

    // Never:
    // func runIOEffect(_ effect: IOEffect) async throws -> IOResult?  // ❌
    // End of seed text

    let api: ProfileAPI

    static var initialState: State { .idle }

    static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.idle, .load), (.loadFailed, .load): return transition(.loading, effect: .loadData)
        case (.loaded(let data), .save), (.saveFailed(let data, _), .save):
            return transition(.saving(data), effect: .saveUser(data))
        default: return undefined
        }
    }

    static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.loading, .dataLoaded(.success(let data))): return nextState(.loaded(data))
        case (.loading, .dataLoaded(.failure(let error))): return nextState(.loadFailed(error))
        case (.saving(let data), .userSaved(.success)): return nextState(.saved(data))
        case (.saving(let data), .userSaved(.failure(let error))): return nextState(.saveFailed(data, error))
        default: return undefined
        }
    }

    /// Every error becomes a result; nothing escapes to the host.
    func runIOEffect(_ effect: IOEffect) async -> IOResult? {
        switch effect {
        case .loadData:
            do { return .dataLoaded(.success(try await api.fetch())) } catch { return .dataLoaded(.failure(error)) }
        case .saveUser(let data):
            do { return .userSaved(.success(try await api.save(data))) } catch { return .userSaved(.failure(error)) }
        }
    }
}
