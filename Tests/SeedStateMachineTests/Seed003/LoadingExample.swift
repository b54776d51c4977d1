// Seed 003, StateMachinePackage: the one code example, as written, between `// Seed text` and
// `// End of seed text`. The text does not compile as written; each change is the smallest that
// makes it compile, marked `// changed:` with the reason. `MyView` is not compiled (below).
import Grove
import GroveRuntime

// Seed text
// define the states and events:
enum State {
  case idle
  case loading
  case loaded(value: Int)
  case failed(error: Error)
}

enum Event {
  case loadingwasRequested(id: String)
  case loadingHasSucceeded(value: Int)
  case loadingHasFailed(error: Error)
}

// define the side effects
struct Load {
  let loadFunction: (String) async throws -> Int // changed: was `() async throws -> Int`, but it is called with an id
	
  func callAsFunction(id: String) -> SideEffect<State, Event> {
    SideEffect {
      do {
        let value = try await loadFunction(id) // changed: was `loadFunction(id: id)`; a closure's call has no labels
	return .loadingHasSucceeded(value: value)
      } catch {
	return .loadingHasFailed(error: error)
      }
    }
  }
}


// provide a way to create the state machine and provide the side effects to execute
func makeStateMachine(load: Load) -> StateMachine<State, Event> {

  StateMachine(initial: .idle) { state, event in
    switch (state, event) {
    case (.idle, .loadingwasRequested(let id)): // changed: was `. loadingwasRequested`; Swift refuses a space after the dot
      return .newState(state: .loading, output: load(id: id))

    case (.loading, .loadingHasSucceeded(let value)): // changed: the same space
      return .newState(.loaded(value: value))

    case (.loading, .loadingHasFailed(let error)): // changed: the same space, and the missing `)`
      return .newState(.failed(error: error)) // changed: the missing `)`
     
    default:
    	return .sameState()
    } // changed: the switch's missing `}`
  }
}

// build the ViewStateMachine from the state machine
@MainActor // changed: added; a ViewStateMachine lives on the main actor, as SwiftUI's ObservableObject does
var viewStateMachine: ViewStateMachine<State, Event> {
	let load = Load(apiService: ApiService())
	let stateMachine = makeStateMachine(load: load)
	return ViewStateMachine(stateMachine: stateMachine)
}
// End of seed text

// Not compiled: `struct MyView: View`. SwiftUI does not exist on Linux, and its body holds `...`
// placeholders. Seed003Tests does what it does: reads `state`, calls `send(_:)` and
// `await start()`.
