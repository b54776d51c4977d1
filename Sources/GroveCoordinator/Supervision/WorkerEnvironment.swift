/// The environment fsm-launch starts its workers with: its own, with Swift's backtracer turned
/// off so that a worker that traps ends at once and is restarted.
///
/// A Swift runtime error (a trap: `fatalError`, an overflow, a force-unwrapped `nil`) runs the
/// backtracer's helper process before the trapped process may end. By default it symbolicates
/// the whole backtrace, which takes seconds on a large binary, and it has been seen to hang
/// (`Scripts/trap-bench.sh`), leaving the trapped worker unreleased: no restart. Without it the
/// runtime still prints the error's message and place, and the worker's flight recorder names
/// the event that was running. Unless the environment already sets `SWIFT_BACKTRACE` (its
/// setting is passed on as it is, so `SWIFT_BACKTRACE=enable=yes fsm-launch …` brings full
/// backtraces back), a worker gets ``backtrace``.
package enum WorkerEnvironment {
    /// What a spawned worker's `SWIFT_BACKTRACE` is unless the environment sets one.
    package static let backtrace = "enable=no"

    /// `environment` with `SWIFT_BACKTRACE` set to ``backtrace`` when it has none.
    package static func spawning(from environment: [String: String]) -> [String: String] {
        var environment = environment
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = backtrace }
        return environment
    }
}
