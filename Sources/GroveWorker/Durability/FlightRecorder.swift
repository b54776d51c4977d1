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
            case .unknown: "recorded event" // its origin unread, or not kept (a crash count)
            }
        }
    }

    package var address: String
    /// The event as the machine's `Codable` Event encodes it: GroveWire's binary codec when
    /// `binary`, else JSON. Empty when it could not be encoded or did not fit.
    package var event: [UInt8]
    package var binary: Bool
    package var origin: Origin
    /// The machine's type name as the worker registered it; nil when the log did not say.
    package var type: String?
    /// The id of the request that carried the event (the coordinator's, as it reached the
    /// worker) when the event ran as it arrived; 0 otherwise.
    package var correlation: UInt64

    package init(address: String, event: [UInt8], binary: Bool, origin: Origin, type: String? = nil, correlation: UInt64 = 0) {
        self.address = address
        self.event = event
        self.binary = binary
        self.origin = origin
        self.type = type
        self.correlation = correlation
    }

    /// What names the event in the store's crash counts and in a worker's quarantine: the codec
    /// (1 binary, 2 JSON), then the bytes. Empty when the event is unknown.
    package var identity: [UInt8] {
        event.isEmpty ? [] : [Self.codecByte(binary: binary)] + event
    }

    /// The byte an identity starts with, and the flight log keeps beside an event: its codec.
    @inline(__always)
    package static func codecByte(binary: Bool) -> UInt8 { binary ? 1 : 2 }

    /// An event's identity, written in place: `encode` appends the event's bytes (after the
    /// codec byte's place) and says its codec: true binary, false JSON, nil when it does not
    /// encode (then there is no identity).
    @inline(__always)
    package static func identity(encoding encode: (inout [UInt8]) -> Bool?) -> [UInt8]? {
        var identity: [UInt8] = [0]
        guard let binary = encode(&identity) else { return nil }
        identity[0] = codecByte(binary: binary)
        return identity
    }
}

/// Where a ``FlightRecorder`` keeps its one entry: a memory-mapped file
/// (``MappedFlightLog``), or memory for tests (``MemoryFlightLog``). Called from the worker's
/// loop thread only.
package protocol FlightLog: AnyObject, Sendable {
    /// Notes that `address`, a machine of type `type`, is about to run `event`, which request
    /// `correlation` carried (0: none); the entry stays until ``end()``. The bytes are copied
    /// before it returns.
    func begin(address: String, type: String, correlation: UInt64, event: UnsafeRawBufferPointer, binary: Bool, origin: RecordedRun.Origin)
    /// The event returned.
    func end()
    /// The entry a process left behind: begun, never ended. Clears it.
    func takeUnfinished() -> RecordedRun?
}

extension FlightLog {
    /// ``begin(address:type:correlation:event:binary:origin:)`` with the event in an array.
    package func begin(address: String, type: String = "", correlation: UInt64 = 0, event: [UInt8], binary: Bool,
                       origin: RecordedRun.Origin) {
        event.withUnsafeBytes { begin(address: address, type: type, correlation: correlation, event: $0, binary: binary, origin: origin) }
    }
}

/// A worker's flight recorder: before any machine's `update` runs an event it notes the
/// address, the machine's type and the event in a ``FlightLog`` that survives the process (a
/// shared mapping: kill -9, a trap, a hang killed by the supervisor), and clears it once
/// `update` and the start of its effect returned. On its next start the worker finds the event
/// it died running: it reports it to the coordinator with its registration (which attributes
/// the crash to the event's pattern and sender), and a durable machine's is counted and
/// quarantined per address in the store.
///
/// An event from the wire that runs at once (``arriving(_:binary:correlation:_:)``) is noted as
/// the bytes received, a copy, with the id of the request that carried it; any other event
/// (queued, inline, from the machine's work, a timer) is encoded. So what the log holds is an event in either codec and in whatever form its sender
/// wrote it: it names the event for the crash counts and the quarantine only once made
/// canonical (decoded and encoded again, ``RecordedRun/identity``), which the worker does
/// when it blames the event on its next start.
///
/// It also watches events under suspicion (one crash counted): when one of them runs to the
/// end, ``onCleared`` is told, so that an operator's kill -9 in the middle of an ordinary event
/// does not count towards quarantining that event forever.
///
/// Used from the worker's loop thread only (its hosts run there): no locking on the hot path.
@usableFromInline
package final class FlightRecorder: @unchecked Sendable {
    /// What the recorder reads and writes per event, behind a pointer: a class's stored `var`
    /// passed inout to a closure, or read around one, costs a dynamic exclusivity check per
    /// access (a runtime call that was a visible share of the worker's loop under load).
    private struct PerEvent {
        /// The bytes of the event from the wire that its host runs at once, while
        /// ``arriving(_:binary:correlation:_:)`` holds them; taken by the first sent event that runs.
        var arrived: UnsafeRawBufferPointer?
        var arrivedBinary = false
        /// The id of the request that carried them.
        var arrivedCorrelation: UInt64 = 0
        /// Reused for every event encoded: no allocation once it has grown.
        var scratch: [UInt8] = []
        /// Whether any identity is under suspicion: the hot path reads only this.
        var watching = false
        /// The canonical identity of the running event, when its address has suspects.
        var suspect: (address: String, identity: [UInt8])?
    }

    private let log: any FlightLog
    private let perEvent: UnsafeMutablePointer<PerEvent>
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
        perEvent = .allocate(capacity: 1)
        perEvent.initialize(to: PerEvent())
        perEvent.pointee.scratch.reserveCapacity(256)
    }

    deinit {
        perEvent.deinitialize(count: 1)
        perEvent.deallocate()
    }

    /// Runs `body`, which hands the event `payload` decodes to its host to run at once (or
    /// to queue): if it runs, it is noted as these bytes instead of being encoded again.
    /// - Parameters:
    ///   - payload: The event as received: GroveWire's binary codec when `binary`, else JSON.
    ///   - correlation: The id of the request that carried it, as the coordinator sent it.
    @inline(__always)
    package func arriving<T>(_ payload: ArraySlice<UInt8>, binary: Bool, correlation: UInt64, _ body: () -> T) -> T {
        payload.withUnsafeBytes { bytes in
            perEvent.pointee.arrived = bytes
            perEvent.pointee.arrivedBinary = binary
            perEvent.pointee.arrivedCorrelation = correlation
            defer { perEvent.pointee.arrived = nil }
            return body()
        }
    }

    /// Notes that `address`, a machine of type `type`, runs an event: the bytes
    /// ``arriving(_:binary:correlation:_:)`` holds for a sent one, else the event `encode`
    /// writes; `encode` appends it and returns whether it wrote the binary codec (true), JSON
    /// (false), or nothing it could (nil).
    /// - Parameter correlation: For a queued sent event whose sender waits, the id of the
    ///   request that carried it (0: none known).
    @inline(__always)
    package func willRun(address: String, type: String, origin: RecordedRun.Origin, correlation: UInt64 = 0,
                         encode: (inout [UInt8]) -> Bool?) {
        let state = perEvent
        if origin == .sent, let arrived = state.pointee.arrived {
            state.pointee.arrived = nil
            log.begin(address: address, type: type, correlation: state.pointee.arrivedCorrelation, event: arrived,
                      binary: state.pointee.arrivedBinary, origin: origin)
        } else {
            state.pointee.scratch.removeAll(keepingCapacity: true)
            let binary = encode(&state.pointee.scratch)
            if binary == nil { state.pointee.scratch.removeAll(keepingCapacity: true) }
            let correlation = origin == .sent ? correlation : 0
            state.pointee.scratch.withUnsafeBytes {
                log.begin(address: address, type: type, correlation: correlation, event: $0, binary: binary ?? false, origin: origin)
            }
        }
        if state.pointee.watching { watch(address, encode: encode) }
    }

    /// The event returned.
    @inline(__always) @usableFromInline
    package func didRun() {
        log.end()
        if perEvent.pointee.suspect != nil { clearSuspect() }
    }

    /// The event the last process died running, if it did; clears it.
    package func takeUnfinished() -> RecordedRun? {
        log.takeUnfinished()
    }

    /// Watches `identity` (canonical: ``RecordedRun/identity`` of an event decoded and encoded
    /// again) at `address`: the first time it runs to the end, `onCleared` is told.
    package func suspect(_ identity: [UInt8], at address: String) {
        guard !identity.isEmpty else { return }
        suspects[address, default: []].insert(identity)
        perEvent.pointee.watching = true
    }

    /// Stops watching the suspects at `address`, whose instance was removed: a new instance
    /// under that address is another machine, and an event that crashed the old one is not
    /// suspected of it.
    /// - Returns: The identities that were watched there.
    package func forgetSuspects(at address: String) -> Set<[UInt8]> {
        guard let watched = suspects.removeValue(forKey: address) else { return [] }
        perEvent.pointee.watching = !suspects.isEmpty
        return watched
    }

    /// Told (on the loop thread, inside the host's turn: hop before touching anything else) of
    /// each suspect that ran to the end; it is no longer watched.
    package func onCleared(_ body: @escaping @Sendable (_ address: String, _ identity: [UInt8]) -> Void) {
        cleared = body
    }

    /// While suspects remain: the running event's canonical identity when its address has
    /// any (encoded here whatever the log holds, so the sender's form does not matter).
    private func watch(_ address: String, encode: (inout [UInt8]) -> Bool?) {
        perEvent.pointee.suspect = nil
        guard suspects[address] != nil else { return }
        guard let identity = RecordedRun.identity(encoding: encode) else { return }
        perEvent.pointee.suspect = (address, identity)
    }

    private func clearSuspect() {
        guard let running = perEvent.pointee.suspect else { return }
        perEvent.pointee.suspect = nil
        guard var watched = suspects[running.address], watched.remove(running.identity) != nil else { return }
        suspects[running.address] = watched.isEmpty ? nil : watched
        perEvent.pointee.watching = !suspects.isEmpty
        cleared?(running.address, running.identity)
    }
}

/// A ``FlightLog`` in memory, for tests: a test plays a process that died mid-event by calling
/// ``begin(address:type:correlation:event:binary:origin:)`` without ``end()``. It outlives the
/// worker it is given to, as the file would.
package final class MemoryFlightLog: FlightLog {
    private let entry = Mutex<(run: RecordedRun, open: Bool)?>(nil)

    package init() {}

    package func begin(address: String, type: String, correlation: UInt64, event: UnsafeRawBufferPointer, binary: Bool,
                       origin: RecordedRun.Origin) {
        let run = RecordedRun(address: address, event: Array(event), binary: binary, origin: origin,
                              type: type.isEmpty ? nil : type, correlation: correlation)
        entry.withLock { $0 = (run, true) }
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

extension FlightRecorder {
    /// Notes that the resting instance `event.address` (``StateTable``) of type `type` runs
    /// `event`, as the bytes received, as ``willRun(address:type:origin:correlation:encode:)``
    /// notes a sent event its host runs on arrival; ``didRun()`` when it returned.
    @usableFromInline
    func willRun(tableEvent event: TableEvent, type: String, encode: (inout [UInt8]) -> Bool?) {
        event.payload.withUnsafeBytes { bytes in
            log.begin(address: event.address, type: type, correlation: event.correlation, event: bytes, binary: event.binary,
                      origin: .sent)
        }
        if perEvent.pointee.watching { watch(event.address, encode: encode) }
    }
}
