// The types seed 002 leaves to the reader, as small as its examples allow, and stand-ins for
// what exists only on Apple's systems (CoreLocation) or only in XCTest.
import Foundation
import Grove
import GroveTea
import Synchronization
import Testing

// MARK: Search

struct SearchResult: Sendable, Equatable {
    var title: String
}

struct SearchState: Sendable {
    var query = ""
    var isSearching = false
    var results: [SearchResult] = []
}

/// Answers from a small catalog. A query a test holds waits until the test opens its gate (or
/// the search is cancelled), so tests can act while a search is in flight.
enum SearchService {
    static let catalog = [SearchResult(title: "Oak"), SearchResult(title: "Cork oak"), SearchResult(title: "Rowan")]
    static let held = Locked<[String: Gate]>([:])

    static func search(_ query: String) async throws -> [SearchResult] {
        if let gate = held.value[query] { try await gate.wait() }
        return catalog.filter { $0.title.lowercased().contains(query.lowercased()) }
    }

    /// Makes searches for `query` wait until the returned gate opens.
    static func hold(_ query: String) -> Gate {
        let gate = Gate()
        held.update { $0[query] = gate }
        return gate
    }
}

// MARK: Streaming (CoreLocation stand-ins)

struct CLLocation: Sendable, Equatable {
    var latitude: Double
    var longitude: Double
}

struct LocationState: Sendable {
    var currentLocation: CLLocation?
}

final class LocationDelegate: @unchecked Sendable {
    let onUpdate: (CLLocation) -> Void
    init(_ onUpdate: @escaping (CLLocation) -> Void) { self.onUpdate = onUpdate }
}

/// Replays ``LocationHardware/fixes`` to its delegate when started, and opens
/// ``LocationHardware/stopped`` when stopped, as the hardware would be switched off.
final class CLLocationManager: @unchecked Sendable {
    var delegate: LocationDelegate?

    func startUpdatingLocation() {
        LocationHardware.starts.update { $0 += 1 }
        for fix in LocationHardware.fixes { delegate?.onUpdate(fix) }
    }

    func stopUpdatingLocation() { LocationHardware.stopped.open() }
}

enum LocationHardware {
    static let fixes = [CLLocation(latitude: 51.5, longitude: -0.12), CLLocation(latitude: 48.85, longitude: 2.35)]
    static let starts = Locked(0)
    static let stopped = Gate()
}

// MARK: Result-based actions

struct NetworkState: Sendable {
    var isLoading = false
    var data: Data?
    var error: Error?
}

/// Answers with ``next``, which a test sets.
enum NetworkService {
    static let next = Locked<Result<Data, TestError>>(.success(Data()))

    static func fetchData() async throws -> Data { try next.value.get() }
}

// MARK: Features

struct User: Sendable, Equatable, Identifiable {
    var id: String
    var name: String
}

struct Post: Sendable, Equatable, Identifiable {
    var id: Int
    var title: String
}

struct PostState: Sendable {
    var posts: [Post] = []
    var published: [Post.ID] = []
}

enum PostAction: Sendable {
    case add(Post)
    case published(Post.ID)
}

/// Adding a post publishes it with a task, so the parent's `map(AppAction.posts)` is exercised.
func postReducer(state: PostState, action: PostAction) -> (PostState, Effect<PostAction>) {
    var newState = state
    switch action {
    case .add(let post):
        newState.posts.append(post)
        return (newState, .task { .published(post.id) })
    case .published(let id):
        newState.published.append(id)
        return (newState, .none)
    }
}

struct SettingsState: Sendable {
    var darkMode = false
}

enum SettingsAction: Sendable {
    case toggleDarkMode
}

func settingsReducer(state: SettingsState, action: SettingsAction) -> (SettingsState, Effect<SettingsAction>) {
    var newState = state
    newState.darkMode.toggle()
    return (newState, .none)
}

// MARK: Environments

protocol APIServiceProtocol: Sendable { func fetch() async throws -> String }
protocol DataStoreProtocol: Sendable {}
protocol AnalyticsProtocol: Sendable {}

struct LiveAPIService: APIServiceProtocol { func fetch() async throws -> String { "live data" } }
struct MockAPIService: APIServiceProtocol { func fetch() async throws -> String { "mock data" } }
struct UserDefaultsDataStore: DataStoreProtocol {}
struct InMemoryDataStore: DataStoreProtocol {}
struct FirebaseAnalytics: AnalyticsProtocol {}
struct MockAnalytics: AnalyticsProtocol {}

protocol NetworkServiceProtocol: Sendable { func fetchData() async throws -> String }
protocol LocationServiceProtocol: Sendable {}

struct LiveNetworkService: NetworkServiceProtocol { func fetchData() async throws -> String { "from the network" } }
struct MockNetworkService: NetworkServiceProtocol { func fetchData() async throws -> String { "from the mock" } }
struct LiveLocationService: LocationServiceProtocol {}
struct MockLocationService: LocationServiceProtocol {}

// MARK: Conditional cancellation

enum SessionWork {
    /// Never opened: the background operations run until cancelled.
    static let gate = Gate()
}

// MARK: XCTest

/// The seed's tests are XCTest-style; these run their assertions as Swift Testing expectations.
func XCTAssertEqual<T: Equatable>(_ actual: T, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual == expected, sourceLocation: sourceLocation)
}

func XCTAssertFalse(_ value: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!value, sourceLocation: sourceLocation)
}

func XCTAssert(_ value: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(value, sourceLocation: sourceLocation)
}

func XCTFail(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
}

// MARK: Tools

/// An error whose description says what happened.
struct TestError: Error, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A value tests share with the seed's closures.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func set(_ value: Value) { mutex.withLock { $0 = value } }
    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
}

/// Closed until ``open()``; ``wait()`` returns once open, or throws when its task is cancelled.
final class Gate: Sendable {
    private struct Inner {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var next = 0
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

    var isOpen: Bool { inner.withLock { $0.isOpen } }

    func wait() async throws {
        let id = inner.withLock { inner in
            defer { inner.next += 1 }
            return inner.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = inner.withLock { inner in
                    if inner.isOpen { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    inner.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let waiter = inner.withLock { $0.waiters.removeValue(forKey: id) }
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
