import GroveWire

extension Topology {
    /// The most one publication takes in the coordinator's queue for a watcher: its topic (a
    /// kind and an address), header, address, a payload of at most `limits.publicationBytes`
    /// (or the `publication-too-large` error in its place, when that is larger), and what
    /// ZeroMQ spends on its four parts.
    public var publicationFootprint: Int {
        let address = limits.addressBytes
        return Limits.longestTopicPrefix + address + Header.size + address
            + max(limits.publicationBytes, Self.tooLargePublicationBytes(addressBytes: address)) + Self.zmqBytesPerPublication
    }

    /// The most bytes the coordinator's `publication-too-large` error (`PublicationLog.tooLarge`)
    /// takes for an address of `addressBytes` bytes (each escaped to at most 6). Here, beside
    /// the footprint it bounds, so the shared model needs nothing of the coordinator's.
    package static func tooLargePublicationBytes(addressBytes: Int) -> Int { 512 + 6 * addressBytes }

    /// ZeroMQ's own cost of a queued publication beyond its bytes: a 64-byte `zmq_msg_t` per
    /// part in the pipe, and a reference-counted block with its allocator's header per part
    /// longer than 33 bytes.
    static let zmqBytesPerPublication = 4 * 128

    /// The events socket's high-water mark: `queues.watcherOutbox`, or fewer when that many
    /// publications of ``publicationFootprint`` would be over `queues.watcherOutboxBytes`.
    /// ZeroMQ counts a watcher's queue in messages, not bytes; this makes the count a bound in
    /// bytes: what the coordinator holds for one watcher connection that does not read stays
    /// under `queues.watcherOutboxBytes` whatever the states' sizes.
    public var watcherQueueMessages: Int {
        max(1, min(queues.watcherOutbox, queues.watcherOutboxBytes / publicationFootprint))
    }
}

extension Topology.Queues {
    /// One line for `fsm-launch --check`: the queues, and what a watcher's queue holds.
    func summary(watcherQueueMessages: Int) -> String {
        "queues: mailboxCapacity \(mailboxCapacity); workerOutbox \(workerOutbox), workerOutboxBytes \(workerOutboxBytes); "
            + "clientOutbox \(clientOutbox), clientOutboxBytes \(clientOutboxBytes); watcherOutbox \(watcherOutbox), "
            + "watcherOutboxBytes \(watcherOutboxBytes) (a watcher that does not read is held \(watcherQueueMessages) publications)"
    }
}

extension Topology {
    /// `fsm-launch --check`'s line about the queues.
    public var queuesSummary: String { queues.summary(watcherQueueMessages: watcherQueueMessages) }
}
