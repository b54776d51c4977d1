// The types seed 004's MyFeature and ErrorHandlingFeature leave to the reader. Internal, as the
// seed's features are: SeedTCASMTests reaches them with `@testable import`, SeedTCASMWorker
// through ``registerSeedFeatures(on:)``.
import Dependencies
import Foundation

/// "Deterministic Error Handling": what the network and the database report.
enum NetworkError: Error, Equatable, Codable { case offline, status(Int) }
enum DatabaseError: Error, Equatable, Codable { case diskFull }

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

/// swift-dependencies' key for ``LocationManager``: no fix, live and in tests, until a
/// `withDependencies` sets one.
private enum LocationManagerKey: DependencyKey {
    static let liveValue: any LocationManager = NoLocation()
    static let testValue: any LocationManager = NoLocation()
}

extension DependencyValues {
    /// The seed's `@Dependency(\.locationManager)`.
    var locationManager: any LocationManager {
        get { self[LocationManagerKey.self] }
        set { self[LocationManagerKey.self] = newValue }
    }
}
