public import Grove

/// Follows a stream of location fixes until told to stop: the "Streaming Data" pattern of
/// SwiftTea's *Advanced Patterns*, written as a ``TeaProgram``.
///
/// The updates run as a stream effect under ``updatesID``. Stopping cancels it, which ends the
/// iteration, so the source's `onTermination` runs and it can switch the hardware off. The seed
/// built the `AsyncStream` inside the reducer, which started the location manager there; here the
/// environment builds it when the host starts the effect, so the reducer stays pure.
///
/// ```swift
/// let tracker = MachineHost(Tea<LocationTracker>.self, env: .replaying(fixes))
/// tracker.start()
/// try tracker.send(.startLocationUpdates)
/// ```
public enum LocationTracker: TeaProgram {
    /// Whether updates are on, and what they said last.
    public struct State: Codable, Sendable, Equatable {
        /// `true` between `startLocationUpdates` and `stopLocationUpdates`.
        public var isTracking = false
        /// The last fix received.
        public var currentLocation: Location?
        /// How many fixes arrived since tracking last started.
        public var updateCount = 0

        public init(isTracking: Bool = false, currentLocation: Location? = nil, updateCount: Int = 0) {
            self.isTracking = isTracking
            self.currentLocation = currentLocation
            self.updateCount = updateCount
        }
    }

    /// Commands, and the fixes the stream delivers.
    public enum Action: Codable, Sendable, Equatable {
        /// Start receiving fixes.
        case startLocationUpdates
        /// Stop receiving fixes; the source is told to stop.
        case stopLocationUpdates
        /// A new fix.
        case locationUpdate(Location)
    }

    /// The location source.
    public struct Environment: Sendable {
        /// Starts the hardware and returns its fixes. Ending iteration must stop the hardware:
        /// set the stream's `onTermination`.
        public var updates: @Sendable () -> AsyncStream<Location>

        public init(updates: @escaping @Sendable () -> AsyncStream<Location>) { self.updates = updates }

        /// A source that delivers `fixes`, then stays open until cancelled, and calls
        /// `onTermination` when its stream ends, as a location manager would be stopped.
        public static func replaying(
            _ fixes: [Location], onTermination: @escaping @Sendable () -> Void = {}
        ) -> Environment {
            Environment {
                AsyncStream { continuation in
                    for fix in fixes { continuation.yield(fix) }
                    continuation.onTermination = { _ in onTermination() }
                }
            }
        }
    }

    /// Three fixes along the Thames, then silence until stopped: what `fsm-worker`'s tracker replays.
    public static let demoFixes = [
        Location(latitude: 51.5007, longitude: -0.1246),
        Location(latitude: 51.5055, longitude: -0.0754),
        Location(latitude: 51.4826, longitude: -0.0077),
    ]

    /// The id of the updates stream.
    public static let updatesID: EffectID = "location-updates"

    public static var initialState: State { State() }

    public static func reduce(_ state: State, _ action: Action) -> (State, Effect) {
        var next = state
        switch action {
        case .startLocationUpdates:
            guard !state.isTracking else { return (state, .unhandled) }
            next.isTracking = true
            next.updateCount = 0
            return (next, .stream({ env in env.updates().map(Action.locationUpdate) }, id: updatesID))

        case .stopLocationUpdates:
            guard state.isTracking else { return (state, .unhandled) }
            next.isTracking = false
            return (next, .cancel(updatesID))

        case .locationUpdate(let location):
            guard state.isTracking else { return (state, .unhandled) }
            next.currentLocation = location
            next.updateCount += 1
            return (next, .none)
        }
    }
}

/// A position on Earth, in degrees.
public struct Location: Codable, Sendable, Hashable {
    /// Degrees north of the equator; negative south of it.
    public var latitude: Double
    /// Degrees east of Greenwich; negative west of it.
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}
