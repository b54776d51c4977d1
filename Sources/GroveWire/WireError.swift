/// A protocol-level error: what an `error` reply carries and what parsing throws. Equality
/// compares codes only; the message is for people and says what to do next.
public struct WireError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kind of error, as it appears in `error` replies.
    /// Open, so that a code a newer peer sends still decodes; encoded as its bare string (the
    /// standard library's coding of a `String`-backed `RawRepresentable`).
    public struct Code: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Frames that are not a Grove message (wrong count, size, magic or encoding).
        public static let malformedFrame = Code(rawValue: "malformed-frame")
        /// A protocol version this process does not speak.
        public static let unsupportedVersion = Code(rawValue: "unsupported-version")
        /// A message kind that protocol v1 does not define, or one not valid in this direction.
        public static let unknownKind = Code(rawValue: "unknown-kind")
        /// A message larger than the coordinator accepts.
        public static let oversized = Code(rawValue: "oversized")
        /// The payload is not valid JSON.
        public static let malformedJSON = Code(rawValue: "malformed-json")
        /// No machine of the topology has this address.
        public static let unknownMachine = Code(rawValue: "unknown-machine")
        /// The payload is JSON but not an event (or id) the machine understands.
        public static let undecodableEvent = Code(rawValue: "undecodable-event")
        /// The event decoded, but its machine refuses it (`Machine.refusal(of:)`): a value no
        /// state could use. The message says which and why.
        public static let invalidEvent = Code(rawValue: "invalid-event")
        /// The event ran and its state was committed, but the state could not be encoded for
        /// the reply (its `Encodable` conformance threw, e.g. a NaN in JSON).
        public static let unencodableState = Code(rawValue: "unencodable-state")
        /// The machine's worker is not registered or was lost.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The worker died before answering.
        public static let workerLost = Code(rawValue: "worker-lost")
        /// A queue on the way is full; retry later.
        public static let busy = Code(rawValue: "busy")
        /// A keyed event whose key its machine applied already, so long ago that the first
        /// answer is no longer kept: it was not applied again. Do not resend it; read the state
        /// with a `get` if the answer is needed.
        public static let alreadyApplied = Code(rawValue: "already-applied")
        /// A keyed event whose sequence is under what its machine still remembers of the client
        /// (a retry that came back behind more runs of unapplied sequences than it keeps): whether
        /// its first copy was applied cannot be told, and it was not applied now. A resend gets
        /// the same answer: read the state with a `get`.
        public static let keyTooOld = Code(rawValue: "key-too-old")
        /// A reply did not fit in what the coordinator holds for a client that does not read its
        /// replies (`queues.clientOutboxBytes`): it was dropped and this error sent in its place.
        /// The request itself was handled.
        public static let replyDropped = Code(rawValue: "reply-dropped")
        /// A worker's reply (a state, a dead-letter list, an io result) would be a larger message
        /// than the coordinator accepts from it (`limits.messageBytes`): this error came in its
        /// place, under the same correlation id. The request was carried out (an event's state
        /// was committed); only its reply is missing.
        public static let replyTooLarge = Code(rawValue: "reply-too-large")
        /// Published on the events endpoint in place of a publication whose payload is over
        /// `limits.publicationBytes` (a state, an output, a worker's list of machines): the
        /// topic and number are the publication's, the payload says its kind and size. Read the
        /// state with a `get`. Never a reply.
        public static let publicationTooLarge = Code(rawValue: "publication-too-large")
        /// The machine's durable instance could not be brought back: its stored record or a
        /// journal entry does not read (a bad codec byte, bytes that do not decode, a journal
        /// the store finds tampered with). It is not started afresh, which would bury the state
        /// it acknowledged; the message names the address, the store and what was wrong, and
        /// says what to do. Its worker serves every other machine.
        public static let unreadableRecord = Code(rawValue: "unreadable-record")
        /// The machine's mailbox is full; retry later.
        public static let mailboxFull = Code(rawValue: "mailbox-full")
        /// The machine reached a terminal state, was stopped or failed.
        public static let machineEnded = Code(rawValue: "machine-ended")
        /// The client's key has no role that allows this request (the message names the role
        /// it needs), or a worker's key is not the one the topology binds to its name.
        public static let forbidden = Code(rawValue: "forbidden")
        /// The event crashed its worker twice and was quarantined as a dead letter (the message
        /// names it); the same event for the same machine is refused until an admin drops or
        /// retries it (`fsm-send dead-letters`).
        public static let quarantined = Code(rawValue: "quarantined")
        /// No dead letter with that id on that worker (dropped or retried already).
        public static let unknownDeadLetter = Code(rawValue: "unknown-dead-letter")
        /// A `poison` request named a client key that is not suspended, or a pattern that is
        /// not quarantined (lifted or released already).
        public static let unknownPoison = Code(rawValue: "unknown-poison")
        /// The request did not reach a machine where it was sent (or, for reason `not-committed`,
        /// its turn was not committed): the location the client used is stale. ``WireError/reason``
        /// says why; resend it after a `locate`, on either route (docs/PROTOCOL.md, "Locating").
        public static let moved = Code(rawValue: "moved")
        /// A worker's registration does not match the topology.
        public static let registrationRejected = Code(rawValue: "registration-rejected")
        /// A worker's registration comes from an older process than the one registered under its
        /// name (an incarnation the coordinator saw replaced, or one started earlier): it must stop.
        public static let superseded = Code(rawValue: "superseded")
        /// No answer within the client's timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// The coordinator cannot be reached.
        public static let unreachable = Code(rawValue: "unreachable")
        /// ZeroMQ refused the endpoint (unknown transport, no port...). Raised by clients on
        /// their side; it never travels on the wire.
        public static let invalidEndpoint = Code(rawValue: "invalid-endpoint")
        /// The endpoint may be another user's: an abstract ipc socket (`ipc://@…`, which anyone
        /// on the host can bind) without CURVE keys to prove the coordinator, or a socket file
        /// whose directory, or the file itself, another user could have made. Raised by clients
        /// and workers on their side before they connect; it never travels on the wire.
        public static let untrustedEndpoint = Code(rawValue: "untrusted-endpoint")
    }

    /// Why a `moved` request was not served where it was sent (``Code/moved``); absent for other
    /// codes.
    public struct Reason: RawRepresentable, Sendable, Hashable, Codable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The address is not placed on this worker now: re-locate.
        public static let notHere = Reason(rawValue: "not-here")
        /// A keyed instance this worker does not hold yet: its first event goes by the coordinator.
        public static let notSpawned = Reason(rawValue: "not-spawned")
        /// The worker is not registered with the coordinator now: re-locate after a pause.
        public static let notRegistered = Reason(rawValue: "not-registered")
        /// The shared store refused the turn (another worker holds the instance): re-locate.
        public static let notCommitted = Reason(rawValue: "not-committed")
        /// The worker is shutting down: re-locate.
        public static let stopping = Reason(rawValue: "stopping")
    }

    public var code: Code
    public var message: String
    /// Why, for a `moved` error; `nil` otherwise.
    public var reason: Reason?
    /// The machine address involved, if any.
    public var address: String?
    /// Where in the payload decoding failed, e.g. `$.updateEmail._0`.
    public var path: String?
    /// The correlation id of the request this error answers, when known. Not encoded: it travels
    /// in the header.
    public var correlation: UInt64?

    public init(_ code: Code, _ message: String, address: String? = nil, path: String? = nil, correlation: UInt64? = nil,
                reason: Reason? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
        self.address = address
        self.path = path
        self.correlation = correlation
    }

    enum CodingKeys: String, CodingKey { case code, reason, message, address, path }

    public static func == (lhs: WireError, rhs: WireError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        var text = code.rawValue
        if let reason { text += " (\(reason.rawValue))" }
        if let address { text += " at \(address)" }
        if let path { text += " (\(path))" }
        return text + ": " + message
    }

    /// The error as an `error` reply payload.
    public var payload: [UInt8] { (try? WireJSON.encode(self)) ?? Array(#"{"code":"internal","message":"unencodable error"}"#.utf8) }
}
