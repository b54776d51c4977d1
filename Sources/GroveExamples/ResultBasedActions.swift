public import Foundation
public import Grove
public import GroveTea

// Seed 002, SwiftTea's "Advanced Patterns": "Result-Based Actions", as written (between the
// `// Seed text` lines), run by `NetworkFeature`, and registered as it is on a worker by
// fsm-worker (`NetworkReducer`, `register(_:initialState:reduce:)`). Beyond the seed's text: `public`, and `any Error`
// for `Error` (this package's modules enable `ExistentialAny`). `NetworkState` and `NetworkService`
// are the reader's, in `NetworkFeature.swift`; Codable and Equatable are in
// `NetworkFeature+Coding.swift`. In a file of its own: `GroveTea`'s module-level `Effect`, which
// the text names, would hide the `Effect` that a `TeaProgram` writes unqualified.

// Seed text
public enum NetworkAction: Sendable {
case fetchData
case dataFetched(Result<Data, any Error>)
}

public func networkReducer(state: NetworkState, action: NetworkAction) -> (NetworkState, Effect<NetworkAction>) {
switch action {
case .fetchData:
var newState = state
newState.isLoading = true
newState.error = nil

return (newState, .task {
do {
let data = try await NetworkService.fetchData()
return .dataFetched(.success(data))
} catch {
return .dataFetched(.failure(error))
}
})

case .dataFetched(.success(let data)):
var newState = state
newState.data = data
newState.isLoading = false
return (newState, .none)

case .dataFetched(.failure(let error)):
var newState = state
newState.error = error
newState.isLoading = false
return (newState, .none)
}
}
// End of seed text
