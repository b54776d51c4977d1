import Synchronization

/// The addresses of the instances that ended (a terminal state, a stop, a failure) since the
/// worker's runtime last looked: noted by each host as it ends, on the worker's loop, and taken
/// by the runtime after each batch and each host drained alone, before their replies leave, so
/// a removed instance's key is free by the time its last reply arrives
/// (`WorkerRuntime+Lifecycle.swift`).
final class EndedInstances: Sendable {
    private let addresses = Mutex<[String]>([])

    func note(_ address: String) {
        addresses.withLock { $0.append(address) }
    }

    /// The addresses noted since the last call, in the order their instances ended.
    func take() -> [String] {
        addresses.withLock { $0.isEmpty ? [] : Swift.exchange(&$0, with: []) }
    }
}
