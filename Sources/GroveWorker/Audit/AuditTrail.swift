import Foundation
import Grove
import GroveRuntime
import GroveWire
import Synchronization

/// Turns one audited instance's trace (``HostOptions/trace``) into audit lines: each committed
/// transition, with the digest of the state before it (the previous transition's after, or the
/// state the instance started from) and after it.
///
/// Runs in the machine's turn, on its host's executor, so transitions reach it in order. An
/// `unhandled` event commits nothing and writes no line.
final class AuditTrail<M: Machine>: Sendable where M.State: Encodable, M.Event: Encodable {
    let address: String
    let worker: String
    let sink: AuditSink
    let carriesStates: Bool
    /// The worker's wall clock (its runtime's): what stamps each line.
    let clock: any HostClock
    /// The digest of the state as it stands now.
    private let current: Mutex<String>

    /// - Parameters:
    ///   - clock: What stamps each line: the worker's wall clock (a test's fixes the time).
    ///   - initial: The state the instance starts from (its restored state, if any).
    init(address: String, worker: String, sink: AuditSink, carriesStates: Bool, clock: any HostClock, initial: M.State) {
        self.clock = clock
        self.address = address
        self.worker = worker
        self.sink = sink
        self.carriesStates = carriesStates
        current = Mutex(AuditDigest.of(state: initial))
    }

    /// The trace handler for the instance at `address` when `sink` audits it; nil otherwise,
    /// which keeps the host on its fast path.
    static func handler(for address: String, worker: String, sink: AuditSink, clock: any HostClock, initial: @autoclosure () -> M.State)
        -> (@Sendable (HostTrace<M>) -> Void)? {
        guard let carriesStates = sink.carriesStates(forAddress: address) else { return nil }
        let trail = AuditTrail(address: address, worker: worker, sink: sink, carriesStates: carriesStates, clock: clock, initial: initial())
        return { trail.record($0) }
    }

    func record(_ trace: HostTrace<M>) {
        switch trace {
        case .processed(let event, let origin, let state):
            let after = AuditDigest.of(state: state)
            let before = current.withLock { Swift.exchange(&$0, with: after) }
            sink.append(line(event: event, origin: origin, before: before, after: after, state: state))
        case .unhandled(_, _, let state):
            // A correct machine left the state as it was; one that did not is caught up, so
            // the next line's `before` is the state that transition really starts from.
            let now = AuditDigest.of(state: state)
            current.withLock { $0 = now }
        case .output, .workEnded, .workFailed, .resultDiscarded:
            break
        }
    }

    func line(event: M.Event, origin: EventOrigin, before: String, after: String, state: M.State) -> AuditLine {
        AuditLine(time: AuditTime.format(clock.now()), worker: worker, address: address, origin: origin.description,
                  event: Self.json(Redaction.redact(event)), before: before, after: after,
                  state: carriesStates ? Self.json(Redaction.redact(state)) : nil)
    }

    /// `value` as GroveWire's JSON; `null` when it does not encode (the line is still written).
    static func json(_ value: some Encodable) -> [UInt8] {
        (try? WireJSON.encode(value)) ?? Array("null".utf8)
    }
}
