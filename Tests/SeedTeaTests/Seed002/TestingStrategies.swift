// Seed 002, SwiftTea's "Advanced Patterns": "Testing Cancellation" and "Testing Effects", as
// written, but for one change (marked): Grove's effect ids are `EffectID`s, not `String`s, so
// `cancelID` returns the id's description. `XCTAssertEqual`, `XCTAssertFalse` and `XCTFail` are
// Swift Testing expectations in Support/, so the XCTest-style function runs from a `@Test`.
import Grove
import GroveTea
import Testing

func testSearchCancellation() {
let initialState = SearchState(isSearching: true)
let (newState, effect) = searchReducer(state: initialState, action: .cancelSearch)

XCTAssertFalse(newState.isSearching)

switch effect {
case .cancel(let id):
XCTAssertEqual(id, "search")
default:
XCTFail("Expected cancel effect")
}
}

extension Effect {
var isNone: Bool {
switch self {
case .none: return true
default: return false
}
}

var isTask: Bool {
switch self {
case .task: return true
default: return false
}
}

var cancelID: String? {
switch self {
case .cancel(let id): return id.description // the seed: `return id`
default: return nil
}
}
}
