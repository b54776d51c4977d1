import GroveWire

/// What the worker's poison rules (``WorkerCore``'s quarantine and dead letters) need of one
/// machine type, without knowing the type: read an event a store or a flight recorder kept,
/// and take one out of a stored record or journal. Each registered type's factory is one
/// (``HostedMachineFactory``); the core's tests pass a stub, so the rules run with no machine.
protocol StoredEventCodec: Sendable {
    /// A dead letter's event as JSON (`redacted` for people); nil when it does not decode.
    func json(ofEvent event: [UInt8], binary: Bool, redacted: Bool) -> JSONValue?
    /// A stored record without the event `identity` (``RecordedRun/identity``) names; nil
    /// when the record holds no such event. For an event of the machine's work
    /// (`fromWork`) that the record does not hold, the record with its re-issued io turned
    /// into interrupted io (nil when it has none): only a re-issued request brings such an
    /// event back after a restart, so at-least-once ends there rather than crash after crash.
    func removing(_ identity: [UInt8], fromWork: Bool, from record: [UInt8]) -> [UInt8]?
    /// A `journal` instance's record and journal without the first journaled event `identity`
    /// names: the record of the state before it, at its sequence; nil when the journal has
    /// no such event.
    func skipping(_ identity: [UInt8], record: MachineRecord, journal: [JournalEntry]) -> MachineRecord?
    /// An event in either codec, in whatever form its sender wrote it, as this type's event
    /// encodes (what ``RecordedRun/identity`` compares); nil when it does not decode or encode.
    func canonical(event: [UInt8], binary: Bool) -> (event: [UInt8], binary: Bool)?
}
