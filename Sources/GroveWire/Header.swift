/// What a message is. The numbers are part of protocol v1 (see docs/PROTOCOL.md).
public enum MessageKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    // Client requests (client → coordinator; events and reads travel on to the worker).
    /// An event for a machine. Answered with `state` (or `accepted` with the no-wait flag).
    case event = 0x01
    /// Reads a machine's current state. Answered with `state`.
    case get = 0x02
    /// Cancels one effect of a machine by id (payload: the id as JSON). Answered with `accepted`.
    case cancel = 0x03
    /// Stops a machine: its work is cancelled, later events fail. Answered with `state`.
    case stop = 0x04
    /// Lists machines and workers. Answered with `listing`.
    case list = 0x05
    /// The raw baseline: routed to a machine's worker like an event, answered `accepted` by the
    /// worker without decoding it or touching a machine. `fsm-load` measures the transport with it.
    case echo = 0x06
    /// Several messages in one (see ``Batch``); any peer may send one, and replies to a client
    /// that batches may come batched.
    case batch = 0x07
    /// The events a worker quarantined as poison (address: the worker's name; payload a
    /// ``DeadLetterRequest``): listed (answered `dead-letter-list`), dropped (`accepted`) or
    /// retried (`state`, as for the event). Needs the `admin` role.
    case deadLetters = 0x08
    /// Restarts a machine from its initial state, whatever its topology's `onEnd` says: a
    /// running one is stopped first (after the events queued before), an ended one starts again.
    /// Answered with `state`: the new instance's initial state. Needs the `admin` role.
    case restart = 0x09
    /// The last published state of every watched address whose `state:` topic starts with one
    /// of the payload's prefixes (a ``SnapshotRequest``), each with its publication's sequence
    /// number: the Clone pattern's state request. Answered with `states`. Needs the `read` role.
    case snapshot = 0x0A
    /// The senders suspended and the event patterns quarantined after crashing workers
    /// (payload a ``PoisonRequest``): listed (answered `poison-list`), a sender's suspension
    /// lifted or a pattern released (`accepted`). Answered by the coordinator itself, which keeps
    /// them. Needs the `admin` role.
    case poison = 0x0B
    /// Where a machine lives: its pool's workers in placement order, each with its state and,
    /// once it serves a direct route, its endpoint (address: a machine name or an instance
    /// address; empty payload). Answered by the coordinator itself with `location`. Needs any
    /// role on the machine addressed.
    case locate = 0x0C

    // Replies (coordinator → client; worker → coordinator).
    /// A machine's state as JSON.
    case state = 0x10
    /// The request was accepted; nothing else to say.
    case accepted = 0x11
    /// The request failed; payload is an ``ErrorReply``.
    case error = 0x12
    /// Payload is a ``Listing``.
    case listing = 0x13
    /// Payload is a ``DeadLetterList``: one worker's quarantined events.
    case deadLetterList = 0x14
    /// Payload is a ``StateSnapshot``: the answer to `snapshot`.
    case states = 0x15
    /// Payload is a ``PoisonList``: the answer to `poison`.
    case poisonList = 0x16
    /// Payload is a ``Location``: the answer to `locate`.
    case location = 0x17

    // Worker ↔ coordinator control.
    /// A worker announces itself (payload ``Registration``).
    case register = 0x20
    /// The coordinator's answer to `register` (payload ``Welcome``).
    case welcome = 0x21
    /// Liveness, both directions; empty payload.
    case heartbeat = 0x22
    /// Which topics watchers subscribe to (payload ``Observation``), so workers publish state
    /// changes only when someone listens.
    case observe = 0x23
    /// The keyed instances a worker hosts (payload ``InstancesReport``), sent after each welcome,
    /// so the coordinator lists instances the worker kept or brought back from its store.
    case instances = 0x24
    /// The event patterns quarantined for every address (payload ``QuarantinedPatterns``, the
    /// whole list each time): the worker refuses a client's event of such a pattern.
    case quarantine = 0x25
    /// Handoff, both directions (payload ``HandoffRelease``). Coordinator → worker: write these
    /// keyed instances, adopted while their own worker was lost, and let them leave memory, as
    /// passivation does; worker → coordinator: these have left (or were never here), so their
    /// own worker, registered again, may take them back.
    case release = 0x26
    /// Handoff, coordinator → worker (payload ``HandoffRelease``): keyed instances handed back
    /// to this, their own worker, by the one that adopted them. Those with work due (a timer, an
    /// io call, a queued event) are taken from the shared store at once, so their timers fire
    /// here without waiting for a message.
    case returned = 0x27
    /// Coordinator → a worker serving direct routes (payload ``ClientTable``): the client keys,
    /// their grants and the suspended ones, the whole table on each change.
    case access = 0x28
    /// Coordinator → the workers of a handoff pool serving direct routes (payload
    /// ``PlacementView``): which workers are handed off and which are taking theirs back.
    case placement = 0x29

    // io effects between workers, through the coordinator.
    /// Run an io request (payload: an ``IOCallHead``, then the request's bytes); correlation = call id.
    case ioRequest = 0x30
    /// The result of an io request (payload ``IOCallResult``); correlation = call id.
    case ioResult = 0x31
    /// Cancel an io request in flight; correlation = call id.
    case ioCancel = 0x32
    /// The answer of the worker running an io request to its `io-cancel`, sent once the
    /// request's task has ended (payload ``IOCancelAnswer``); correlation = call id.
    case ioCancelled = 0x33

    // Observation (worker → coordinator → PUB).
    /// A machine committed a state (payload ``StateChange``).
    case stateChanged = 0x40
    /// An effect started, completed, failed, was cancelled or lost (payload ``EffectEvent``).
    case effect = 0x41
    /// A worker registered, was lost or came back (payload ``WorkerEvent``).
    case worker = 0x42
    /// A machine emitted an output (payload ``OutputEvent``); the coordinator applies routes.
    case output = 0x43
    /// A machine ended: terminal state, stopped or failed (payload ``MachineEnded``).
    case machine = 0x44

    public var description: String { name }

    /// The kind's name as written in docs/PROTOCOL.md.
    public var name: String {
        switch self {
        case .event: "event"
        case .get: "get"
        case .cancel: "cancel"
        case .stop: "stop"
        case .list: "list"
        case .echo: "echo"
        case .batch: "batch"
        case .deadLetters: "dead-letters"
        case .restart: "restart"
        case .deadLetterList: "dead-letter-list"
        case .snapshot: "snapshot"
        case .poison: "poison"
        case .poisonList: "poison-list"
        case .locate: "locate"
        case .location: "location"
        case .quarantine: "quarantine"
        case .release: "release"
        case .returned: "returned"
        case .access: "access"
        case .placement: "placement"
        case .states: "states"
        case .state: "state"
        case .accepted: "accepted"
        case .error: "error"
        case .listing: "listing"
        case .register: "register"
        case .welcome: "welcome"
        case .heartbeat: "heartbeat"
        case .observe: "observe"
        case .instances: "instances"
        case .ioRequest: "io-request"
        case .ioResult: "io-result"
        case .ioCancel: "io-cancel"
        case .ioCancelled: "io-cancelled"
        case .stateChanged: "state-changed"
        case .effect: "effect"
        case .worker: "worker"
        case .output: "output"
        case .machine: "machine"
        }
    }
}

/// The fixed 12-byte header, the first frame of every Grove message. The coordinator routes on
/// it and the address frame without decoding payloads.
///
/// ```
/// offset size
/// 0      1    magic 0x47 ("G")
/// 1      1    protocol version (1)
/// 2      1    kind (MessageKind)
/// 3      1    flags (bit 0: payload is binary, else JSON; bit 1: no-wait; bit 2: unhandled;
///                    bit 3: the payload starts with a trace context, ``TraceParent``;
///                    bit 4: then with an idempotency key, ``IdempotencyKey``)
/// 4      8    correlation id, unsigned, big-endian; echoed in the reply
/// ```
public struct Header: Sendable, Hashable {
    /// The first byte of every header.
    public static let magic: UInt8 = 0x47
    /// The protocol version this build speaks.
    public static let version: UInt8 = 1
    /// The header's size in bytes.
    public static let size = 12

    /// Flag bits.
    public struct Flags: OptionSet, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The payload uses the binary codec instead of JSON.
        public static let binary = Flags(rawValue: 1 << 0)
        /// For `event`: answer `accepted` once the machine queued it, not its committed state.
        public static let noWait = Flags(rawValue: 1 << 1)
        /// On a `state` reply: the machine's `update` returned `.unhandled` for the event, so
        /// the state is the one it was already in.
        public static let unhandled = Flags(rawValue: 1 << 2)
        /// The payload starts with a W3C `traceparent` (``TraceParent``): one length byte, the
        /// value, then the payload proper. Parsers strip it (``WireMessage/trace``), so the rest
        /// of Grove reads payloads as before.
        public static let traced = Flags(rawValue: 1 << 3)
        /// For `event`: the payload (after the trace context, when traced) starts with an
        /// idempotency key (``IdempotencyKey``): a repeat of a key the machine already applied
        /// is answered with the first answer, not applied again.
        public static let keyed = Flags(rawValue: 1 << 4)

        /// Every bit protocol v1 defines. The others (bits 5–7) are reserved: a flag changes how
        /// the payload is read (its codec, a prefix before it), so a reader that skipped one it
        /// does not know would misread the payload; a message with one set is refused
        /// (``Header/undefinedFlags(_:correlation:where:)``). New flags come with a new version.
        public static let defined: Flags = [.binary, .noWait, .unhandled, .traced, .keyed]
    }

    /// Why flag bits `raw` are refused, or `nil` when protocol v1 defines every bit set.
    /// - Parameters:
    ///   - raw: The flags byte as it came.
    ///   - correlation: The message's correlation id, for the reply.
    ///   - place: Where the byte was, for the message: "the header (frame 0)", "batch envelope 3".
    static func undefinedFlags(_ raw: UInt8, correlation: UInt64, where place: @autoclosure () -> String) -> WireError? {
        let undefined = raw & ~Flags.defined.rawValue
        guard undefined != 0 else { return nil }
        let bits = (0 ..< 8).filter { undefined & (1 << $0) != 0 }.map(String.init).joined(separator: ", ")
        return WireError(.malformedFrame, """
            \(place()) sets flag bits 0x\(String(undefined, radix: 16)) (bit \(bits)), which protocol v1 does not define; \
            clear them: only bits 0–4 (binary, no-wait, unhandled, traced, keyed) have a meaning. See docs/PROTOCOL.md, 'Frames'
            """, correlation: correlation)
    }

    public var kind: MessageKind
    public var flags: Flags
    public var correlation: UInt64

    public init(_ kind: MessageKind, flags: Flags = [], correlation: UInt64 = 0) {
        self.kind = kind
        self.flags = flags
        self.correlation = correlation
    }

    /// The header's 12 bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = [Self.magic, Self.version, kind.rawValue, flags.rawValue]
        out.reserveCapacity(Self.size)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: correlation >> UInt64(shift))) }
        return out
    }

    /// Calls `body` with the header's 12 bytes in memory on the stack (no array is made).
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var raw: (UInt32, UInt64) = (0, 0)
        return try Swift.withUnsafeMutableBytes(of: &raw) { buffer in
            buffer[0] = Self.magic
            buffer[1] = Self.version
            buffer[2] = kind.rawValue
            buffer[3] = flags.rawValue
            buffer.storeBytes(of: correlation.bigEndian, toByteOffset: 4, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(rebasing: buffer[0 ..< Self.size]))
        }
    }

    /// Reads a header frame.
    /// - Throws: ``WireError`` `malformed-frame` (wrong size or magic, a flag bit v1 does not
    ///   define), `unsupported-version`, or `unknown-kind`; ``WireError/correlation`` carries the correlation id whenever it could be
    ///   read, so the error reply can still be matched to its request.
    public init(_ frame: [UInt8]) throws(WireError) {
        let header = frame.withUnsafeBytes { raw in Result { () throws(WireError) -> Header in try Header(raw) } }
        self = try header.get()
    }

    /// Reads a header frame in borrowed memory, as ``init(_:)-([UInt8])`` does.
    /// - Throws: ``WireError``, as ``init(_:)-([UInt8])`` does.
    public init(_ frame: UnsafeRawBufferPointer) throws(WireError) {
        guard frame.count == Self.size, frame[0] == Self.magic else {
            throw WireError(.malformedFrame,
                "the first frame must be the \(Self.size)-byte Grove header starting with 0x47 ('G'); got \(frame.count) bytes"
                + (frame.isEmpty ? "" : " starting with 0x\(String(frame[0], radix: 16))")
                + ". See docs/PROTOCOL.md, 'Frames'")
        }
        var correlation: UInt64 = 0
        for byte in frame[4..<12] { correlation = correlation << 8 | UInt64(byte) }
        guard frame[1] == Self.version else {
            throw WireError(.unsupportedVersion,
                "protocol version \(frame[1]) is not supported; this peer speaks version \(Self.version)",
                correlation: correlation)
        }
        guard let kind = MessageKind(rawValue: frame[2]) else {
            throw WireError(.unknownKind,
                "message kind 0x\(String(frame[2], radix: 16)) is not part of protocol v1; see docs/PROTOCOL.md, 'Message kinds'",
                correlation: correlation)
        }
        if let refusal = Self.undefinedFlags(frame[3], correlation: correlation, where: "the header (frame 0)") { throw refusal }
        self.init(kind, flags: Flags(rawValue: frame[3]), correlation: correlation)
    }
}
