// The types and helpers the seeds use but leave to the reader, written as plainly as the seeds
// suggest. Nothing here changes a seed's machine; it only lets its text compile and run.
import Grove
import Synchronization
import Testing

/// Seeds 000 and 001: who signs in.
struct User: Sendable, Hashable {
    var id: String
    var name: String
}

/// Seed 000's `AppNavigator.Route.detail(Item)` and seed 001's `ViewController.data`.
struct Item: Sendable, Hashable {
    var id: String
}

/// Seed 000's `DataLoader`: what the data service returns.
struct DataItem: Sendable, Hashable {
    var id: String
    var title: String
}

/// Seed 001's `ConnectionState`.
struct Session: Sendable, Hashable {
    var id: String
}

/// Seed 001's `FormState.valid(submissionData:)`.
struct SubmissionData: Sendable, Hashable {
    var fields: [String: String]
}

/// Seed 000's `UserForm` (`.failure(error)`) and seed 001's `FormState`.
enum SubmissionResult: Sendable {
    case success(confirmation: String)
    case failure(Error)
}

/// Seed 001's `FormState.editing(fields:errors:)`.
enum ValidationError: Error, Hashable {
    case required(field: String)
}

/// Seed 000's `UserForm.FormData.isValid`: `email.isValidEmail && phone.isValidPhone`.
extension String {
    var isValidEmail: Bool {
        let parts = split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
    }

    var isValidPhone: Bool { filter(\.isWholeNumber).count >= 7 }
}

/// Seed 000's `AuthFlow`: the error an authentication service throws for a locked account.
struct AccountLockedError: Error {}

extension Error {
    /// Seed 000's `AuthFlow` asks `error.isAccountLocked`.
    var isAccountLocked: Bool { self is AccountLockedError }
}

/// Seed 000's `AuthFlow` calls `extractEmail(from: state)` and `extractToken(from: state)`
/// without defining them.
extension AuthFlow {
    static func extractEmail(from state: State) -> String {
        switch state {
        case .enteringCredentials(let email, _), .authenticating(let email, _),
             .requiresTwoFactor(_, let email), .enteringTwoFactor(_, let email, _),
             .verifyingTwoFactor(_, let email, _):
            return email
        case .unauthenticated, .authenticated, .authenticationFailed, .locked:
            return ""
        }
    }

    static func extractToken(from state: State) -> String {
        switch state {
        case .requiresTwoFactor(let token, _), .enteringTwoFactor(let token, _, _),
             .verifyingTwoFactor(let token, _, _):
            return token
        case .unauthenticated, .enteringCredentials, .authenticating, .authenticated,
             .authenticationFailed, .locked:
            return ""
        }
    }
}

/// Seed 001's `LoginFlow` starts from `.start` (its tests write `var state = LoginFlow.State.start`)
/// but does not say so; Grove's `Transducer` needs it named to host the type.
extension LoginFlow {
    static var initialState: State { .start }
}

/// Seed 001's `testLoginFlow()` is written for XCTest; these two run its assertions as Swift
/// Testing expectations.
func XCTAssertEqual<T: Equatable>(_ actual: T, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual == expected, sourceLocation: sourceLocation)
}

func XCTFail(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}

/// `TestStore` compares states and events. The seed's hold `any Error`, so they compare by
/// description: enough for tests, which use errors with distinct descriptions.
extension LoginFlow.State: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

extension LoginFlow.Event: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { String(describing: lhs) == String(describing: rhs) }
}

/// An error whose description says what happened, for the tests' failures.
struct TestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A value tests share with the seeds' environment closures.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    var value: Value { mutex.withLock { $0 } }

    func set(_ value: Value) { mutex.withLock { $0 = value } }

    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
}
