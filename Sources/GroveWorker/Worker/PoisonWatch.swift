import GroveWire
import Synchronization

/// A worker's defence against poison events: the flight recorder its hosts note each event
/// in, the events it quarantined at one address (durable machines, kept in its store), and the
/// patterns the coordinator quarantined for every address; a client may send none of them.
///
/// The recorder is opened when the worker starts (``WorkerRuntime/start()``), before any
/// instance exists: a host takes the recorder when it is made.
final class PoisonWatch: Sendable {
    /// How many deaths of its worker quarantine an event. One is not enough: an operator's kill
    /// -9 lands in the middle of some event, and that event is innocent.
    static let crashesToQuarantine = 2

    private let recording = Mutex<FlightRecorder?>(nil)
    /// Quarantined events by address: their dead letter's id and identity.
    private let quarantined = Mutex<[String: [(id: Int64, identity: [UInt8])]]>([:])
    /// How many addresses have quarantined events: the hot path reads only this.
    private let addresses = Atomic<Int>(0)
    /// The event cases quarantined for every address, by machine type (the coordinator's
    /// `quarantine` messages and welcomes).
    private let patterns = Mutex<[String: Set<String>]>([:])
    /// How many patterns are quarantined: the hot path reads only this.
    private let patternCount = Atomic<Int>(0)

    /// The recorder durable hosts note their events in; nil without a store, or when it is
    /// switched off.
    var recorder: FlightRecorder? {
        get { recording.withLock { $0 } }
        set { recording.withLock { $0 = newValue } }
    }

    /// Whether `address` has quarantined events (one atomic load when none has).
    @inline(__always)
    func hasQuarantined(_ address: String) -> Bool {
        addresses.load(ordering: .relaxed) > 0 && quarantined.withLock { $0[address] != nil }
    }

    /// The dead letter quarantining `identity` at `address`, if one does.
    func deadLetter(of identity: [UInt8], at address: String) -> Int64? {
        quarantined.withLock { $0[address]?.first { $0.identity == identity }?.id }
    }

    /// Refuses the same event for the same machine from now on.
    func quarantine(_ identity: [UInt8], at address: String, id: Int64) {
        guard !identity.isEmpty else { return }
        quarantined.withLock { table in
            table[address, default: []].append((id, identity))
            addresses.store(table.count, ordering: .relaxed)
        }
    }

    /// Accepts the event of dead letter `id` again.
    func release(_ id: Int64) {
        quarantined.withLock { table in
            for (address, letters) in table where letters.contains(where: { $0.id == id }) {
                let kept = letters.filter { $0.id != id }
                table[address] = kept.isEmpty ? nil : kept
            }
            addresses.store(table.count, ordering: .relaxed)
        }
    }

    /// Whether any pattern is quarantined (one atomic load).
    @inline(__always)
    var hasPatterns: Bool { patternCount.load(ordering: .relaxed) > 0 }

    /// The event cases of machine type `type` quarantined for every address; nil when none is.
    func quarantinedCases(of type: String) -> Set<String>? {
        patterns.withLock { $0[type] }
    }

    /// Replaces the quarantined patterns with `list` (the coordinator sends the whole list).
    /// - Returns: Whether they changed.
    @discardableResult
    func setPatterns(_ list: [PoisonPattern]) -> Bool {
        let table = Dictionary(grouping: list, by: \.type).mapValues { Set($0.map(\.event)) }
        return patterns.withLock { current in
            guard current != table else { return false }
            current = table
            patternCount.store(list.count, ordering: .relaxed)
            return true
        }
    }

    /// The refusal of an event of a pattern quarantined for every address.
    static func refusal(of pattern: PoisonPattern, address: String) -> WireError {
        WireError(.quarantined, "\(pattern.type) events of case '\(pattern.event)' crashed workers again and again and are quarantined "
            + "for every address (pattern \(pattern)); they are refused until an admin releases the pattern once the machine is fixed: "
            + "see it with `fsm-send quarantines`, then `fsm-send quarantines release \(pattern.type) \(pattern.event)`",
            address: address)
    }

    /// The refusal of an event quarantined as dead letter `id`.
    static func refusal(id: Int64, address: String, worker: String) -> WireError {
        WireError(.quarantined, "this event for \(address) crashed worker \(worker) \(crashesToQuarantine) times and was "
            + "quarantined as dead letter \(worker):\(id); it is refused until an admin acts: see it with `fsm-send dead-letters`, "
            + "then `fsm-send dead-letters drop \(worker):\(id)` or `fsm-send dead-letters retry \(worker):\(id)` once the machine is fixed",
            address: address)
    }
}
