import GroveCluster
@_spi(GroveInternal) import GroveWire

/// What a worker may send the coordinator, by size. The coordinator's workers socket drops the
/// connection of a worker that sends a frame over `limits.messageBytes` (`ZMQ_MAXMSGSIZE`):
/// every request in flight to that worker would then go unanswered and the worker be declared
/// lost, for one state that grew too big. So the worker checks each message before it leaves
/// (``check(_:address:payloadBytes:)``) and cuts its batches below the limit
/// (``BatchBuilder`` users ask ``startsNewBatch(at:adding:)``); this struct only decides, the
/// link (`WorkerLink.swift`) moves the bytes.
///
/// A message counts as the batch envelope it becomes (``envelopeBytes(address:payload:)``),
/// even when it leaves alone: one rule for both, and any message that passes fits in a batch
/// of its own.
struct OutboundLimit: Sendable {
    /// The largest frame the coordinator accepts from this worker (the welcome's
    /// `messageBytes`; before a welcome, or from an older coordinator, the default 16 MiB).
    var messageBytes: Int
    /// The most envelopes the coordinator accepts in one batch from this worker (the welcome's
    /// `batchEnvelopes`; before a welcome, or from an older coordinator, the default 10,000):
    /// it refuses a larger batch whole, from its header, as it refuses a client's.
    var batchEnvelopes: Int
    /// The messages already logged, as kind and address, so each is logged once (what is too
    /// big once is usually too big at every event). Forgotten when it reaches ``toldCapacity``:
    /// then said again, and the memory stays bounded however many keyed instances grow.
    private(set) var told: Set<String> = []
    static let toldCapacity = 1024

    init(messageBytes: Int = Topology.Limits().messageBytes, batchEnvelopes: Int = Topology.Limits().batchEnvelopes) {
        self.messageBytes = messageBytes
        self.batchEnvelopes = max(1, batchEnvelopes)
    }

    /// A batch envelope's fixed part: kind, flags, correlation, address length, payload length.
    static let envelopeHeaderBytes = 16

    /// The bytes a message takes as a batch envelope.
    static func envelopeBytes(address: Int, payload: Int) -> Int { envelopeHeaderBytes + address + payload }

    /// What becomes of one message.
    enum Verdict: Equatable {
        /// It fits: send it.
        case send
        /// Send this message in its place, under the same correlation id and address.
        case replace(kind: MessageKind, payload: [UInt8])
        /// Send nothing.
        case drop
    }

    struct Decision: Equatable {
        var verdict: Verdict
        /// A warning for the operator: set the first time a kind of message for an address is
        /// refused. Never holds the payload.
        var warning: String?
    }

    /// Whether a batch holding `byteCount` bytes must be sent before an envelope of `envelope`
    /// bytes joins it: a batch is one frame, under the same limit as a lone message.
    func startsNewBatch(at byteCount: Int, adding envelope: Int) -> Bool {
        byteCount > 0 && byteCount + envelope > messageBytes
    }

    /// Whether `batch` leaves now: it reached its preferred size (``BatchBuilder/preferredByteCount``)
    /// or the most envelopes the coordinator takes in one (``batchEnvelopes``). Asked after each
    /// envelope joins a batch, so none ever holds more.
    func isFull(_ batch: BatchBuilder) -> Bool {
        batch.byteCount >= BatchBuilder.preferredByteCount || batch.count >= batchEnvelopes
    }

    /// Whether a message with an address and a payload of these sizes goes as it is: what
    /// ``check(_:address:payloadBytes:)`` answers `send` to without a word.
    @inline(__always)
    func fits(addressBytes: Int, payloadBytes: Int) -> Bool {
        Self.envelopeBytes(address: addressBytes, payload: payloadBytes) <= messageBytes
    }

    /// What to do with a message of `kind` for `address` whose payload is `payloadBytes` long.
    mutating func check(_ kind: MessageKind, address: String, payloadBytes: Int) -> Decision {
        let addressBytes = address.utf8.count
        let envelope = Self.envelopeBytes(address: addressBytes, payload: payloadBytes)
        guard !fits(addressBytes: addressBytes, payloadBytes: payloadBytes) else { return Decision(verdict: .send) }
        let size = "\(payloadBytes) bytes encoded (\(envelope) with its envelope), over limits.messageBytes \(messageBytes)"
        let remedy = "raise limits.messageBytes in the topology or keep the state smaller"
        var verdict: Verdict
        var what: String
        switch kind {
        case .state:
            what = "a state reply"
            verdict = .replace(kind: .error, payload: WireError(.replyTooLarge,
                "the state of \(address) is \(size), so its worker cannot send it as a reply. The request was carried out: "
                    + "an event ran and its state was committed (do not resend it blindly), a stop stopped the machine, a restart "
                    + "restarted it, a get changed nothing. To read the state, \(remedy)", address: address).payload)
        case .deadLetterList:
            what = "a dead-letter list"
            verdict = .replace(kind: .error, payload: WireError(.replyTooLarge,
                "the dead-letter list of worker \(address) is \(size); drop dead letters by id (fsm-send dead-letters) or raise "
                    + "limits.messageBytes in the topology", address: address).payload)
        case .ioResult:
            what = "an io result"
            verdict = .replace(kind: .ioResult, payload: IOCallResult.payload(failing: WireError.Code.replyTooLarge.rawValue,
                "the io response for \(address) is \(size), so the worker that ran it cannot send it; raise limits.messageBytes "
                    + "in the topology or make the response smaller"))
        case .accepted, .error, .ioCancelled:
            // Small by construction; an address at the limit could still take one over.
            what = "a \(kind.name) reply"
            verdict = .replace(kind: .error, payload: WireError(.replyTooLarge,
                "the \(kind.name) reply for \(address) is \(size); \(remedy)").payload)
        case .stateChanged:
            // Not sent at all: a publication's payload is the state, and anything else in its
            // place would be read as one by watchers. They keep the last state that fitted;
            // a get of the address answers reply-too-large, which says why.
            what = "a state change (not published; watchers keep the last state that fitted)"
            verdict = .drop
        case .output:
            what = "an output (not published or routed)"
            verdict = .drop
        case .machine, .effect, .instances, .release, .ioRequest, .ioCancel, .register, .heartbeat:
            // Made small where they are made (`HostedMachine`, `InstancesReport`, a release's
            // pages, the core's calls): past that, dropping is all that is left short of losing the connection.
            what = "a \(kind.name) message"
            verdict = .drop
        case .event, .get, .cancel, .stop, .list, .echo, .batch, .deadLetters, .restart, .snapshot, .poison, .locate, .listing, .states,
             .poisonList, .location, .welcome, .observe, .quarantine, .returned, .access, .placement, .worker:
            what = "a \(kind.name) message (which a worker does not send)"
            verdict = .drop
        }
        if case .replace(_, let replacement) = verdict,
           Self.envelopeBytes(address: addressBytes, payload: replacement.count) > messageBytes {
            // limits.messageBytes below even an error reply: nothing can be sent.
            what += " (and even an error in its place would be too large)"
            verdict = .drop
        }
        return Decision(verdict: verdict, warning: tell(kind, address: address,
            "\(what) for \(address) was not sent: it is \(size). "
                + (verdict == .drop ? "" : "Answered reply-too-large in its place. ")
                + "Raise limits.messageBytes in the topology or keep it smaller (logged once per address)"))
    }

    /// The warning the first time, nil after.
    private mutating func tell(_ kind: MessageKind, address: String, _ text: String) -> String? {
        if told.count >= Self.toldCapacity { told.removeAll() }
        return told.insert("\(kind.name) \(address)").inserted ? text : nil
    }
}
