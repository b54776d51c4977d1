// Seed 001, Oak's "Understanding Finite State Machines": "Testing FSM Logic", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
//
// The seed's test is XCTest-style; `XCTAssertEqual` and `XCTFail` are provided in Support/ as
// Swift Testing expectations so the function runs from `@Test` in this Swift Testing target.
import Testing

func testLoginFlow() {
    var state = LoginFlow.State.start
    
    // Test transition
    LoginFlow.update(&state, event: .startLogin)
    
    // Verify result
    if case .enteringCredentials(let email, let password) = state {
        XCTAssertEqual(email, "")
        XCTAssertEqual(password, "")
    } else {
        XCTFail("Expected enteringCredentials state")
    }
}
