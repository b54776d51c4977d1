// Seed 004's features on a worker, with the reader's demo services: what SeedTCASMWorker hosts.
import Dependencies
import Foundation
import GroveTCA
public import GroveWorker
import Synchronization

/// Registers `MyFeature` and `ErrorHandlingFeature` on `worker` under those names, as GroveTCA
/// reducers. `MyFeature`'s service reads `@Dependency(\.locationManager)`, set here with
/// `withDependencies` to a fix the end-to-end test finds in the loaded data.
public func registerSeedFeatures(on worker: inout WorkerConfiguration) {
    withDependencies { $0.locationManager = FixedLocation(lastFix: "52.5,13.4") } operation: {
        worker.register("MyFeature", initialState: MyFeature.initialState,
                        reduce: MyFeature(apiService: LocatedService()).reduceFunction)
    }
    worker.register("ErrorHandlingFeature", initialState: ErrorHandlingFeature.initialState,
                    reduce: ErrorHandlingFeature(api: .flaky()).reduceFunction)
}

/// A location that never moves.
struct FixedLocation: LocationManager {
    var lastFix: String?
}

/// Answers `fetchData` with where the location dependency says it is.
struct LocatedService: APIService {
    @Dependency(\.locationManager) var locationManager

    func fetchData() async -> MyFeature.IOResult? {
        .dataFetched("data near \(locationManager.lastFix ?? "nowhere")")
    }
}

extension ProfileAPI {
    /// The first fetch fails offline, the next ones load "ada"; every save fails, disk full.
    static func flaky() -> ProfileAPI {
        let fetches = Mutex(0)
        return ProfileAPI(
            fetch: { () async throws(NetworkError) -> Data in
                let attempt = fetches.withLock { count in
                    count += 1
                    return count
                }
                if attempt == 1 { throw NetworkError.offline }
                return Data("ada".utf8)
            },
            save: { _ async throws(DatabaseError) in throw DatabaseError.diskFull })
    }
}
