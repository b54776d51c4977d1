import GroveWire

extension Topology {
    /// What one peer may make the coordinator keep: the sizes it checks before it keeps anything
    /// of a message, and the bounds of what it remembers for clients, watchers and keyed machines.
    /// Each past-the-limit request is answered with an error naming the setting (docs/SECURITY.md,
    /// "Bounds before work"). All greater than 0.
    public struct Limits: Sendable, Equatable {
        /// The longest address a request may name, in UTF-8 bytes; at most
        /// ``WireMessage/maximumAddressLength`` (1024), the default.
        public var addressBytes: Int
        /// The largest payload of one request, in bytes. Defaults to 1 MiB.
        public var payloadBytes: Int
        /// The largest frame a client or a worker may send (a batch's payload is one frame):
        /// ZeroMQ disconnects a peer that sends a larger one before reading it
        /// (`ZMQ_MAXMSGSIZE`). At least ``payloadBytes`` plus one envelope's header and
        /// address. Defaults to 16 MiB.
        public var messageBytes: Int
        /// The most envelopes one batch from a client may hold, read from the batch's header (its
        /// correlation) before any envelope is: a batch past it is refused whole (`oversized`),
        /// on the coordinator's clients endpoint and on a worker's direct socket. Each envelope is
        /// decided in the turn that reads its batch; on a release build 700,000 `get`s in one
        /// 16 MiB batch held the coordinator's loop for 1.9 s. From 1 to 100,000
        /// (``batchEnvelopesRange``); defaults to 10,000, fsm-load's largest `--batch`.
        public var batchEnvelopes: Int
        /// Keyed instances one keyed machine may have; an event for a new key past it is
        /// answered `busy`. Defaults to 100000.
        public var instancesPerMachine: Int
        /// Distinct topic prefixes one watcher's key may subscribe to; past it the key is
        /// refused on the events endpoint and the events endpoint's connections are reset.
        /// Defaults to 128.
        public var watcherSubscriptions: Int
        /// Distinct topic prefixes all watchers together may subscribe to; past it the events
        /// endpoint's connections are reset. Defaults to 1024.
        public var subscriptions: Int
        /// The bytes the coordinator spends remembering the replies it owes one client that does
        /// not read (its busies); past it further requests of that client go unanswered, logged.
        /// Defaults to 1 MiB.
        public var owedBytesPerClient: Int
        /// The same for every client together. Defaults to 32 MiB.
        public var owedBytes: Int
        /// The bytes of watched states the coordinator keeps for `snapshot`; past it a state is
        /// listed as omitted. Defaults to 64 MiB.
        public var watchedStateBytes: Int
        /// The largest payload a publication carries on the events endpoint: past it the
        /// publication is replaced, under the same topic and the next number, by an `error`
        /// `publication-too-large` that gives the payload's size (read the state with `get`).
        /// With ``Topology/Queues/watcherOutboxBytes`` it bounds the bytes the coordinator holds
        /// for a watcher that does not read. Defaults to 64 KiB.
        public var publicationBytes: Int

        /// - Parameters:
        ///   - addressBytes: The longest address, in bytes (at most 1024).
        ///   - payloadBytes: The largest request payload.
        ///   - messageBytes: The largest frame from a client or a worker.
        ///   - batchEnvelopes: The most envelopes in one batch from a client.
        ///   - instancesPerMachine: Keyed instances per keyed machine.
        ///   - watcherSubscriptions: Distinct prefixes per watcher key.
        ///   - subscriptions: Distinct prefixes in all.
        ///   - owedBytesPerClient: Bytes of owed replies remembered per client.
        ///   - owedBytes: Bytes of owed replies remembered in all.
        ///   - watchedStateBytes: Bytes of states kept for snapshots.
        ///   - publicationBytes: The largest payload published on the events endpoint.
        public init(addressBytes: Int = 1024, payloadBytes: Int = 1 << 20, messageBytes: Int = 16 << 20,
                    batchEnvelopes: Int = 10_000, instancesPerMachine: Int = 100_000, watcherSubscriptions: Int = 128, subscriptions: Int = 1024,
                    owedBytesPerClient: Int = 1 << 20, owedBytes: Int = 32 << 20, watchedStateBytes: Int = 64 << 20,
                    publicationBytes: Int = 64 << 10) {
            self.addressBytes = addressBytes
            self.payloadBytes = payloadBytes
            self.messageBytes = messageBytes
            self.batchEnvelopes = batchEnvelopes
            self.instancesPerMachine = instancesPerMachine
            self.watcherSubscriptions = watcherSubscriptions
            self.subscriptions = subscriptions
            self.owedBytesPerClient = owedBytesPerClient
            self.owedBytes = owedBytes
            self.watchedStateBytes = watchedStateBytes
            self.publicationBytes = publicationBytes
        }

        /// The values ``batchEnvelopes`` may take: at 100,000 one batch already holds a release
        /// loop for about 0.27 s (a seventh of the 1.9 s of 700,000 envelopes) before anyone else
        /// is served; more would near the default heartbeat timeout (1.5 s) in a debug build.
        public static let batchEnvelopesRange = 1 ... 100_000

        /// The bytes of a batch envelope's fixed part (kind, flags, correlation, address and
        /// payload lengths): one request in a batch takes this, its address and its payload.
        public static let envelopeHeaderBytes = 15

        /// The smallest ``messageBytes`` that still carries one request of the largest size.
        public var smallestMessageBytes: Int { payloadBytes + addressBytes + Self.envelopeHeaderBytes }

        /// The longest topic prefix the events endpoint publishes under (`machine:`).
        static let longestTopicPrefix = "machine:".utf8.count

        /// The longest prefix a watcher may subscribe to: a topic's kind and an address. ZeroMQ
        /// disconnects a watcher that sends a longer one before reading it
        /// (``subscriptionFrameBytes``).
        public var subscriptionBytes: Int { Self.longestTopicPrefix + addressBytes }

        /// The largest frame a subscription of ``subscriptionBytes`` takes on the wire: ZMTP 3.1
        /// sends it as a `SUBSCRIBE` command (the name's length byte and 9 letters, then the
        /// prefix), ZMTP 3.0 as a message (a flag byte, then the prefix).
        public var subscriptionFrameBytes: Int { 10 + subscriptionBytes }
    }
}

extension Topology.Limits {
    /// One line for `fsm-launch --check`: every limit, by its key.
    public var summary: String {
        "limits: addressBytes \(addressBytes), payloadBytes \(payloadBytes), messageBytes \(messageBytes), batchEnvelopes \(batchEnvelopes); "
            + "instancesPerMachine \(instancesPerMachine); watcherSubscriptions \(watcherSubscriptions), subscriptions \(subscriptions); "
            + "owedBytesPerClient \(owedBytesPerClient), owedBytes \(owedBytes); watchedStateBytes \(watchedStateBytes); publicationBytes \(publicationBytes)"
    }
}
