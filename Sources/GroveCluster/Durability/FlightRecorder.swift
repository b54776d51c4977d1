import Foundation
import Synchronization

/// The event a worker's last process was running when it died, as its flight recorder kept it.
package struct RecordedRun: Sendable, Hashable {
    /// Where the event came from, for people (and for finding it in a stored record).
    package enum Origin: UInt8, Sendable, Hashable {
        /// From a client, or a route: `send`.
        case sent = 0
        /// Returned inline by a transition (`.events`).
        case inline = 1
        /// Delivered by the machine's work: a task, a stream, an io result (interrupted io too).
        case effect = 2
        /// A timer fired.
        case timer = 3
        /// Replayed from a `journal` machine's journal while the worker brought it back.
        case journal = 4
        /// The recorder could not read what the file said.
        case unknown = 255

        /// The word for people: "a timer event".
        var noun: String {
            switch self {
            case .sent: "sent event"
            case .inline: "inline event"
            case .effect: "event from the machine's work"
            case .timer: "timer event"
            case .journal: "journaled event it was replaying"
            case .unknown: "event"
            }
        }
    }

    package var address: String
    /// The event as the machine's `Codable` Event encodes it: GroveWire's binary codec when
    /// `binary`, else JSON. Empty when it could not be encoded or did not fit.
    package var event: [UInt8]
    package var binary: Bool
    package var origin: Origin

    package init(address: String, event: [UInt8], binary: Bool, origin: Origin) {
        self.address = address
        self.event = event
        self.binary = binary
        self.origin = origin
    }

    /// What names the event in the store's crash counts and in a worker's quarantine: the codec
    /// (1 binary, 2 JSON), then the bytes. Empty when the event is unknown.
    package var identity: [UInt8] {
        event.isEmpty ? [] : [binary ? 1 : 2] + event
    }
}

/// Where a ``FlightRecorder`` keeps its one entry: a memory-mapped file
/// (``MappedFlightLog``), or memory for tests (``MemoryFlightLog``). Called from the worker's
/// loop thread only.
package protocol FlightLog: AnyObject, Sendable {
    /// Notes that `address` is about to run `event` (the entry stays until ``end()``).
    func begin(address: String, event: [UInt8], binary: Bool, origin: RecordedRun.Origin)
    /// The event returned.
    func end()
    /// The entry a process left behind: begun, never ended. Clears it.
    func takeUnfinished() -> RecordedRun?
}

/// A worker's flight recorder: before a durable machine's `update` runs an event it notes the
/// address and the event in a ``FlightLog`` that survives the process (a shared mapping: kill
/// -9, a trap, a hang killed by the supervisor), and clears it once `update` and the start of
/// its effect returned. On its next start the worker finds the event it died running.
///
/// It also watches events under suspicion (one crash counted): when one of them runs to the
/// end, ``onCleared`` is told, so that an operator's kill -9 in the middle of an ordinary event
/// does not count towards quarantining that event forever.
///
/// Used from the worker's loop thread only (its hosts run there): no locking on the hot path.
package final class FlightRecorder: @unchecked Sendable {
    private let log: any FlightLog
    /// Reused for every event: no allocation once it has grown.
    private var scratch: [UInt8] = []
    private var current: (address: String, binary: Bool)?
    /// Identities under suspicion, by address.
    private var suspects: [String: Set<[UInt8]>] = [:]
    private var cleared: (@Sendable (String, [UInt8]) -> Void)?

    /// `GROVE_FLIGHT_RECORDER=off` in a worker's environment: no recording, so no poison event
    /// is ever quarantined. For measuring what recording costs, and for checking that the
    /// tests of quarantine fail without it; not for production.
    package static var switchedOff: Bool {
        ProcessInfo.processInfo.environment["GROVE_FLIGHT_RECORDER"] == "off"
    }

    package init(log: any FlightLog) {
        self.log = log
        scratch.reserveCapacity(256)
    }

    /// Notes that `address` runs the event `encode` writes; `encode` appends it and returns
    /// whether it wrote the binary codec (true), JSON (false), or nothing it could (nil).
    @inline(__always)
    package func willRun(address: String, origin: RecordedRun.Origin, encode: (inout [UInt8]) -> Bool?) {
        scratch.removeAll(keepingCapacity: true)
        let binary = encode(&scratch)
        if binary == nil { scratch.removeAll(keepingCapacity: true) }
        log.begin(address: address, event: scratch, binary: binary ?? false, origin: origin)
        if !suspects.isEmpty { current = (address, binary ?? false) }
    }

    /// The event returned.
    @inline(__always)
    package func didRun() {
        log.end()
        if !suspects.isEmpty { checkSuspect() }
    }

    /// The event the last process died running, if it did; clears it.
    package func takeUnfinished() -> RecordedRun? {
        log.takeUnfinished()
    }

    /// Watches `identity` at `address`: the first time it runs to the end, `onCleared` is told.
    package func suspect(_ identity: [UInt8], at address: String) {
        guard !identity.isEmpty else { return }
        suspects[address, default: []].insert(identity)
    }

    /// Told (on the loop thread, inside the host's turn: hop before touching anything else) of
    /// each suspect that ran to the end; it is no longer watched.
    package func onCleared(_ body: @escaping @Sendable (_ address: String, _ identity: [UInt8]) -> Void) {
        cleared = body
    }

    private func checkSuspect() {
        guard let run = current, !scratch.isEmpty, var watched = suspects[run.address] else { return }
        current = nil
        let identity = [run.binary ? 1 : 2] + scratch
        guard watched.remove(identity) != nil else { return }
        suspects[run.address] = watched.isEmpty ? nil : watched
        cleared?(run.address, identity)
    }
}

/// A ``FlightLog`` in memory, for tests: a test plays a process that died mid-event by calling
/// ``begin(address:event:binary:origin:)`` without ``end()``. It outlives the worker it is
/// given to, as the file would.
package final class MemoryFlightLog: FlightLog {
    private let entry = Mutex<(run: RecordedRun, open: Bool)?>(nil)

    package init() {}

    package func begin(address: String, event: [UInt8], binary: Bool, origin: RecordedRun.Origin) {
        entry.withLock { $0 = (RecordedRun(address: address, event: event, binary: binary, origin: origin), true) }
    }

    package func end() {
        entry.withLock { $0?.open = false }
    }

    package func takeUnfinished() -> RecordedRun? {
        entry.withLock { entry in
            defer { entry = nil }
            return entry?.open == true ? entry?.run : nil
        }
    }

    /// The last event begun, ended or not.
    package var last: RecordedRun? { entry.withLock { $0?.run } }
}
