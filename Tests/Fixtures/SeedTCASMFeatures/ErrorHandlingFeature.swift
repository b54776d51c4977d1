// Seed 004, TCA-SM: "4. Deterministic Error Handling", as written inside a feature of the
// reader's, between `// Seed text` and `// End of seed text`. `NetworkError`, `DatabaseError` and
// the feature's `api` are the reader's. The "Never:" line is the seed's counter-example, a bare
// declaration without a body: it stays a comment, and `IOStateMachine` refuses such a function
// (its `runIOEffect` does not throw; see `throwingRunIOEffectDoesNotConform`). `StateMachine` is
// GroveTCA's. The Codable conformances below (the reader's) let it run on a worker.
import Foundation
import Grove
import GroveTCA
import protocol GroveTCA.StateMachine

struct ErrorHandlingFeature: StateMachine {
    enum State: Equatable, Codable {
        case idle
        case loading
        case loaded(Data)
        case saving(Data)
        case saved(Data)
        case loadFailed(NetworkError)
        case saveFailed(Data, DatabaseError)
    }
    enum Input: Codable { case load, save }
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

/// An IO result as it crosses processes: `{"dataLoaded":{"success":"<base64>"}}`,
/// `{"userSaved":{"failure":"diskFull"}}` (`Result` is not Codable).
extension ErrorHandlingFeature.IOResult: Codable {
    private enum CodingKeys: String, CodingKey { case dataLoaded, userSaved }
    private enum Outcome: String, CodingKey { case success, failure }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if container.contains(.dataLoaded) {
            let outcome = try container.nestedContainer(keyedBy: Outcome.self, forKey: .dataLoaded)
            self = .dataLoaded(outcome.contains(.success)
                ? .success(try outcome.decode(Data.self, forKey: .success))
                : .failure(try outcome.decode(NetworkError.self, forKey: .failure)))
        } else {
            let outcome = try container.nestedContainer(keyedBy: Outcome.self, forKey: .userSaved)
            self = .userSaved(outcome.contains(.success)
                ? .success(())
                : .failure(try outcome.decode(DatabaseError.self, forKey: .failure)))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .dataLoaded(.success(let data)):
            var outcome = container.nestedContainer(keyedBy: Outcome.self, forKey: .dataLoaded)
            try outcome.encode(data, forKey: .success)
        case .dataLoaded(.failure(let error)):
            var outcome = container.nestedContainer(keyedBy: Outcome.self, forKey: .dataLoaded)
            try outcome.encode(error, forKey: .failure)
        case .userSaved(.success):
            var outcome = container.nestedContainer(keyedBy: Outcome.self, forKey: .userSaved)
            try outcome.encode(true, forKey: .success)
        case .userSaved(.failure(let error)):
            var outcome = container.nestedContainer(keyedBy: Outcome.self, forKey: .userSaved)
            try outcome.encode(error, forKey: .failure)
        }
    }
}
