// The types seed 004 leaves to the reader, and the names it uses for Grove's.
import Foundation
import Grove
import Synchronization
import Testing

/// TCA-SM's protocol is `StateMachine`, a TCA `Reducer`; Grove's is `IOStateMachine`, without TCA
/// (and Grove's `StateMachine` is StateMachinePackage's value). The seed's texts say
/// `StateMachine`, so this target names Grove's protocol so.
typealias StateMachine = IOStateMachine

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

/// "Deterministic Error Handling": what the network and the database report.
enum NetworkError: Error, Equatable { case offline, status(Int) }
enum DatabaseError: Error, Equatable { case diskFull }

/// The reader's API for ``ErrorHandlingFeature``; each call says in its type what it throws.
struct ProfileAPI: Sendable {
    var fetch: @Sendable () async throws(NetworkError) -> Data
    var save: @Sendable (Data) async throws(DatabaseError) -> Void
}

/// "Why Static vs Instance Methods": the service ``MyFeature``'s `runIOEffect` calls.
protocol APIService: Sendable {
    func fetchData() async -> MyFeature.IOResult?
}

/// The location dependency ``MyFeature`` declares with `@Dependency(\.locationManager)`.
protocol LocationManager: Sendable {
    var lastFix: String? { get }
}

struct NoLocation: LocationManager {
    var lastFix: String? { nil }
}

/// A stand-in for TCA's dependency values (swift-dependencies), enough for the seed's
/// `@Dependency(\.locationManager)`: values live in a task local, overridden with
/// ``withDependencies(_:operation:)``, and a feature reads them when it is made.
struct DependencyValues: Sendable {
    @TaskLocal static var current = DependencyValues()
    var locationManager: any LocationManager = NoLocation()
}

/// A stand-in for TCA's `@Dependency`: the value at `keyPath` when the feature was made.
@propertyWrapper
struct Dependency<Value: Sendable>: Sendable {
    var wrappedValue: Value

    init(_ keyPath: KeyPath<DependencyValues, Value>) {
        wrappedValue = DependencyValues.current[keyPath: keyPath]
    }
}

/// Runs `operation` with the dependencies `update` sets, as swift-dependencies' function does.
func withDependencies<R>(_ update: (inout DependencyValues) -> Void, operation: () throws -> R) rethrows -> R {
    var values = DependencyValues.current
    update(&values)
    return try DependencyValues.$current.withValue(values, operation: operation)
}

/// A child feature whose actions the state machine leaves to others.
enum ChildFeature {
    enum Action: Equatable { case tapped }
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
