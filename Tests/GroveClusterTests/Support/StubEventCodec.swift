@testable import GroveCluster
@testable import GroveWorker
import GroveWire

/// A machine type's codec for the worker's poison rules, with answers set by the test and the
/// calls it got noted: no machine, no store.
struct StubEventCodec: StoredEventCodec {
    /// What ``skipping(_:record:journal:)`` returns.
    var skipped: MachineRecord?
    /// What ``removing(_:fromWork:from:)`` returns for an event of the machine's work, and for
    /// any other.
    var removedFromWork: [UInt8]?
    var removed: [UInt8]?
    var canonicalEvent: (event: [UInt8], binary: Bool)?
    /// What ``json(ofEvent:binary:redacted:)`` returns, redacted or not.
    var redactedJSON: JSONValue?
    var json: JSONValue?

    func json(ofEvent event: [UInt8], binary: Bool, redacted: Bool) -> JSONValue? { redacted ? redactedJSON : json }
    func removing(_ identity: [UInt8], fromWork: Bool, from record: [UInt8]) -> [UInt8]? { fromWork ? removedFromWork : removed }
    func skipping(_ identity: [UInt8], record: MachineRecord, journal: [JournalEntry]) -> MachineRecord? { skipped }
    func canonical(event: [UInt8], binary: Bool) -> (event: [UInt8], binary: Bool)? { canonicalEvent }
}
