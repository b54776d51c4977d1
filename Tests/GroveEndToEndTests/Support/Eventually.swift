import Foundation

/// Something the harness could not do or a condition that did not hold in time. Thrown, so the
/// test stops at the first thing that went wrong and `withCluster` still cleans up.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Polls `probe` until it returns a value, or fails once `timeout` has passed. This is how the
/// tests wait for something to happen in another process: never a fixed sleep.
/// - Parameters:
///   - what: What is awaited, for the error message.
///   - timeout: The deadline; generous, since it only matters when the test fails.
///   - interval: The pause between probes.
///   - probe: Returns the awaited value, or `nil` when it is not there yet.
/// - Throws: ``HarnessError`` naming `what` when the deadline passes; whatever `probe` throws.
@discardableResult
func eventually<T>(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(15),
    interval: Duration = .milliseconds(25),
    _ probe: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await probe() { return value }
        guard ContinuousClock.now < deadline else {
            throw HarnessError("timed out after \(timeout) waiting for \(what())")
        }
        try await Task.sleep(for: interval)
    }
}

/// Polls `condition` until it holds, or fails once `timeout` has passed. (Not an overload of
/// `eventually`: a Bool-returning closure would match its `T?` probe and never wait.)
func waitUntil(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(15),
    interval: Duration = .milliseconds(25),
    _ condition: () async throws -> Bool
) async throws {
    try await eventually(what(), timeout: timeout, interval: interval) { try await condition() ? true : nil }
}

/// Blocks the calling thread until `condition` holds or `timeout` passes; for cleanup, which
/// must run even when the test's task was cancelled (a time limit), so it cannot `await` a
/// cancellable sleep.
/// - Returns: `true` when `condition` held in time.
func waitBlocking(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(10_000)
    }
    return true
}

/// Catches `eventually { bool }`, which would otherwise return at once with `Optional(false)`.
@available(*, unavailable, message: "use waitUntil for a condition")
func eventually(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(15),
    interval: Duration = .milliseconds(25),
    _ condition: () async throws -> Bool
) async throws -> Bool {
    fatalError()
}
