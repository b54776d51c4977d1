// Seed 002, SwiftTea's "Advanced Patterns": "Result-Based Actions", as written.
// Only the imports are added; `NetworkState` and `NetworkService` are the reader's.
import Foundation
import Grove
import GroveTea

enum NetworkAction: Sendable {
case fetchData
case dataFetched(Result<Data, Error>)
}

func networkReducer(state: NetworkState, action: NetworkAction) -> (NetworkState, Effect<NetworkAction>) {
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
