import GroveCluster

/// Where a pool's keyed instances live while one of its workers is lost past the grace period
/// (`durability.handoff`), and which of them are on their way back (`CoordinatorCore+Handoff.swift`).
/// Empty, and never looked at on the hot path, in a topology without handoff or while every
/// worker is registered.
struct HandoffBook {
    /// The grace period; `nil`: the topology hands nothing off.
    let grace: Duration?
    /// Workers lost since the last tick, whose grace starts at the next one (``CoordinatorCore/lose(_:reason:cause:)``
    /// has no clock).
    var justLost: Set<String> = []
    /// Lost workers of handoff pools, and since when (the first tick after the loss).
    var lostSince: [String: ContinuousClock.Instant] = [:]
    /// Lost workers whose grace has run out: their keyed durable instances are placed on the
    /// other workers of their pool.
    var handedOff: Set<String> = []
    /// Instances routed to a worker other than their own (address → that worker) while their
    /// own was handed off: what that worker is told to release when their own comes back (or,
    /// when that worker is lost by then, what their own is told it has back, `returned`).
    var adopted: [String: String] = [:]
    /// Instances being released (address → the worker releasing them): routed nowhere (clients
    /// are answered `unavailable`) until that worker says they left, or is lost.
    var releasing: [String: String] = [:]
    /// Workers registered again whose instances the other workers of a direct pool release as a
    /// whole (own worker → those yet to answer): a direct client may have had them adopted
    /// without the coordinator routing a request for them, so no address list names them all.
    /// Each of their keys stays placed on the worker that adopted it, and is refused to
    /// clients, until every one of those answered (or was lost).
    var homesBack: [String: Set<String>] = [:]
    /// When each of `homesBack` was first seen by a tick: past ``homesBackLimit`` the workers
    /// yet to answer are no longer waited for (one of an earlier build never answers `homes`).
    var homesBackSince: [String: ContinuousClock.Instant] = [:]

    init(topology: Topology) {
        grace = topology.durability.handoff.map { .milliseconds($0.graceMs) }
    }

    /// Whether placement is the topology's everywhere: nothing handed off or being released.
    var isIdle: Bool { handedOff.isEmpty && releasesNone }

    /// Whether no instance is being released: every request may go where it is placed.
    var releasesNone: Bool { releasing.isEmpty && homesBack.isEmpty }
}
