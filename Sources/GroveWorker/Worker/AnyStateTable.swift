import Grove
import GroveCluster
import GroveRuntime
public import GroveWire

// What the worker's runtime sees of a state table (StateTable.swift): one per machine whose
// idle instances rest as their state alone, and what goes in and out of it.

/// The resting states of one machine's instances on this worker (``StateTable``), as the
/// runtime sees them: not generic, so that it holds one per machine.
protocol AnyStateTable: AnyObject {
    /// Runs an event on the state of `event.address`: see ``TableOutcome``. With `fresh`,
    /// an address with no entry starts one at the initial state; without, such an address is
    /// ``TableOutcome/absent`` (it may be a host's).
    func run(_ event: TableEvent, fresh: Bool) -> TableOutcome
    /// The entry at `address` leaves the table for a host that starts at its state; nil when
    /// there is none.
    func take(_ address: String) -> (any TableHandover)?
    /// Puts back what ``take(_:)`` or a ``TableOutcome/needsHost(_:)`` took out, at the state
    /// it was taken at, when no host could be made for it: reached at sweep `touched`.
    func putBack(_ address: String, _ start: any TableHandover, touched: Int)
    /// The state at `address` as JSON for a `get` (redacted when it has secrets), or why it
    /// does not encode; nil when there is no entry.
    func state(at address: String) -> Result<[UInt8], WireError>?
    /// Walks on through the table for passivation sweep `sweep` (``Passivation``), at most
    /// `slots` slots, round it from where the last part stopped, and at most once round per
    /// sweep: each entry last reached at sweep `idleThrough` or before is dropped. How many
    /// were, and how many slots it walked.
    func sweep(_ sweep: Int, idleThrough: Int, slots: Int) -> (dropped: Int, walked: Int)
    /// Whether an instance of the machine may be a host (in the runtime's `instances`): set
    /// when one is made, never cleared. While false, an address with no entry is new.
    var mayHaveHosts: Bool { get set }
    /// Whether an entry is at `address`.
    func holds(_ address: String) -> Bool
    /// How many entries it holds: instances at rest in memory.
    var count: Int { get }
    /// The addresses of its entries (a copy: for a report, a watcher).
    var addresses: [String] { get }
    /// Empties the table: the states that were in it, to start hosts from.
    func takeAll() -> [(address: String, start: any TableHandover)]
}

/// Where a host taking over a resting instance starts (``StateTable/Start``): not generic,
/// so the runtime passes it to the machine's factory, which knows its type.
@usableFromInline
protocol TableHandover: AnyObject {}

/// One event for a resting instance, as the runtime received it.
@usableFromInline
struct TableEvent {
    @usableFromInline let address: String
    /// The event: GroveWire's binary codec when `binary`, else JSON.
    @usableFromInline let payload: ArraySlice<UInt8>
    @usableFromInline let binary: Bool
    /// The request that carried it.
    @usableFromInline let correlation: UInt64
    /// Where its sender waits; nil for a no-wait event (answered `accepted` by the runtime).
    @usableFromInline let reply: StateReply?
    /// The passivation sweep under way: what the entry notes as its last message.
    @usableFromInline let sweep: Int
    /// The worker's flight recorder: the event is noted before `update` runs, as a host notes
    /// it, so a crash in `update` is attributed to it.
    @usableFromInline let recorder: FlightRecorder?
}

/// What became of an event for a resting instance.
@usableFromInline
enum TableOutcome {
    /// Its transition returned no effect and was committed in the table; a sender that waits
    /// was answered.
    case ran
    /// It did not decode, or the machine refuses it: nothing ran. A key never seen is entered
    /// at its initial state anyway, as a host is made for such an event.
    case refused(WireError)
    /// Its transition needs a host: the entry left the table, and a host made from `start`
    /// takes the transition over (``Hosted/takeOver(_:reply:)``).
    case needsHost(any TableHandover)
    /// No entry there, and it was not to start one: nothing ran.
    case absent
}
