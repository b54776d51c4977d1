// The types seed 004 leaves to the reader. `StateMachine` is GroveTCA's, named in each seed file
// with `import protocol GroveTCA.StateMachine` (Grove's `StateMachine` is seed 003's value); the
// types MyFeature and ErrorHandlingFeature use are in SeedTCASMFeatures, beside them.
import Foundation
import Grove
import GroveTCA
import Synchronization
import Testing

/// The pure test's `Feature` is the mock feature.
typealias Feature = MockFeature

struct Token: Hashable, Sendable { var value: String }
struct User: Hashable, Sendable { var name: String }
struct Post: Hashable, Sendable { var title: String }
struct Profile: Hashable, Sendable { var name: String }

/// The reader's API for ``AuthenticateFeature``: `nil` means the step failed.
struct AuthAPI: Sendable {
    var login: @Sendable (String, String) async -> Token?
    var fetchProfile: @Sendable (Token) async -> Profile?
}

/// A child feature whose actions the state machine leaves to others: it counts taps. A `Scope`
/// reaches it through `MockFeature.Action.childAction`.
struct ChildFeature: Reducer {
    enum Action: Equatable { case tapped }

    var body: some Reducer<Int, Action> {
        Reduce { taps, action in
            switch action {
            case .tapped: taps += 1
            }
            return .none
        }
    }
}

/// Seed 004's test is XCTest-style; this runs its assertion as a Swift Testing expectation.
func XCTAssertEqual<T: Equatable>(_ actual: T, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual == expected, sourceLocation: sourceLocation)
}

/// Closed until ``open()``; ``wait()`` returns once open, or throws when its task is cancelled.
final class Gate: Sendable {
    private struct Inner {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var next = 0
        var cancelled = 0
    }
    private let inner = Mutex(Inner())

    func open() {
        let waiters = inner.withLock { inner in
            inner.isOpen = true
            defer { inner.waiters = [:] }
            return Array(inner.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many waits ended because their task was cancelled.
    var cancelledWaits: Int { inner.withLock { $0.cancelled } }

    func wait() async throws {
        let id = inner.withLock { inner in
            defer { inner.next += 1 }
            return inner.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = inner.withLock { inner in
                    if inner.isOpen { return .success(()) }
                    if Task.isCancelled {
                        inner.cancelled += 1
                        return .failure(CancellationError())
                    }
                    inner.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let waiter = inner.withLock { inner in
                let waiter = inner.waiters.removeValue(forKey: id)
                if waiter != nil { inner.cancelled += 1 }
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// Runs `body`, giving up after `timeout`: `nil` when the deadline passed first.
func withinDeadline<T: Sendable>(
    _ timeout: Duration = .seconds(10), _ body: @escaping @Sendable () async throws -> T
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { try? await body() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
