import Foundation
import Grove
import GroveExamples
import GroveTesting
import Testing

/// Seed 002's "Result-Based Actions", its reducer as written, run as `Tea<NetworkFeature>`.
@Suite("NetworkFeature", .timeLimit(.minutes(2)))
struct NetworkFeatureTests {
    static let offline = NetworkFailure("offline")

    @Test("fetchData loads; the result, success or failure, is one action; a new fetch clears the error")
    func resultBasedActions() async {
        let store = TestStore(Tea<NetworkFeature>.self)
        await store.send(.fetchData) { $0.isLoading = true }
        await store.receive(.dataFetched(.success(NetworkService.demoData))) {
            $0.isLoading = false
            $0.data = NetworkService.demoData
        }
        await store.send(.dataFetched(.failure(Self.offline))) { $0.error = Self.offline }
        await store.send(.fetchData) {
            $0.isLoading = true
            $0.error = nil
        }
        await store.receive(.dataFetched(.success(NetworkService.demoData))) { $0.isLoading = false }
        await store.finish()
    }

    @Test("an error crosses processes as its description and compares by it")
    func errorsTravelAsDescriptions() throws {
        struct Timeout: Error, CustomStringConvertible { var description: String { "timed out" } }
        let event = NetworkAction.dataFetched(.failure(Timeout()))
        let encoded = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
        #expect(encoded == #"{"dataFetched":{"_0":{"failure":{"_0":{"message":"timed out"}}}}}"#)
        let decoded = try JSONDecoder().decode(NetworkAction.self, from: Data(encoded.utf8))
        #expect(decoded == .dataFetched(.failure(NetworkFailure("timed out"))))
        #expect(decoded != .dataFetched(.failure(Self.offline)))

        let state = NetworkState(data: NetworkService.demoData, error: Timeout())
        #expect(try JSONDecoder().decode(NetworkState.self, from: JSONEncoder().encode(state)) == state)
        #expect(state != NetworkState(data: NetworkService.demoData, error: Self.offline))
    }
}
