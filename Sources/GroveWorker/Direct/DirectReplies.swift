@_spi(GroveInternal) import GroveWire

/// The messages one hand-off of posted direct replies makes (docs/DIRECT-ROUTES.md, 2.2), as the
/// coordinator batches replies to a client that batches (`batchingClients`, `ClientRun`): a
/// client that sent a batch gets what is ready for it as one `batch` message (cut once it
/// reaches ``BatchBuilder/preferredByteCount``; one reply alone goes as a plain message), a
/// client that never did gets each reply as a plain message. Per client, in the order added.
/// Pure: it only builds frames, the I/O thread sends them.
struct DirectReplies {
    /// What to send: the client's routing id, then the message's frames.
    typealias Message = [[UInt8]]

    /// The batches of clients that are not the current run's, by routing id.
    private var batches: [[UInt8]: BatchBuilder] = [:]
    /// Clients with a batch under way, in the order they got their first reply (for a stable
    /// order of ``finish()``).
    private var order: [[UInt8]] = []
    /// The client of the last reply, whether it batches, and its batch: a hand-off's replies
    /// come in runs for one client (a batch's envelopes), and a reply in the run needs no lookup
    /// (comparing a routing id with the run's is cheap, most often the same buffer).
    private var runPeer: [UInt8]?
    private var runBatching = false
    private var runBatch = BatchBuilder()

    init() {}

    /// The bytes of the batch being built for `peer`: they wait for it as surely as its outbox
    /// does (the backlog a large reply is judged against).
    func building(for peer: [UInt8]) -> Int { peer == runPeer ? runBatch.byteCount : batches[peer]?.byteCount ?? 0 }

    /// Adds one reply for `peer`.
    /// - Parameter batching: Whether the client sent a batch (then its replies are batched);
    ///   asked when a run for another client begins.
    /// - Returns: A message to send now: the reply itself for a client that does not batch, or
    ///   a batch that reached its preferred size; `nil` while the batch grows.
    mutating func add(to peer: [UInt8], batching: @autoclosure () -> Bool, _ kind: MessageKind, flags: Header.Flags,
                      correlation: UInt64, address: some Collection<UInt8>, payload: [UInt8]) -> Message? {
        if peer != runPeer { beginRun(for: peer, batching: batching()) }
        guard runBatching else { return [peer, Header(kind, flags: flags, correlation: correlation).bytes, Array(address), payload] }
        runBatch.append(kind: kind, flags: flags, correlation: correlation, address: address, payload: payload)
        guard runBatch.byteCount >= BatchBuilder.preferredByteCount else { return nil }
        // The next reply starts a batch of its own, behind this one.
        let full = runBatch
        runBatch = BatchBuilder(reservingCapacity: full.byteCount)
        return [peer] + full.frames()
    }

    /// Puts the run's batch aside and takes up `peer`'s (a new one for a client not seen yet).
    private mutating func beginRun(for peer: [UInt8], batching: Bool) {
        endRun()
        runPeer = peer
        runBatching = batching
        guard batching else { return }
        if let building = batches.removeValue(forKey: peer) {
            runBatch = building
        } else {
            order.append(peer)
        }
    }

    /// The run's batch back among the others.
    private mutating func endRun() {
        if let runPeer, runBatching {
            batches[runPeer] = runBatch
            runBatch = BatchBuilder()
        }
        runPeer = nil
    }

    /// The batches still under way, one message per client (a batch of one as a plain message).
    mutating func finish() -> [Message] {
        endRun()
        defer {
            batches = [:]
            order = []
        }
        return order.compactMap { peer in
            guard let batch = batches[peer], !batch.isEmpty else { return nil }
            return [peer] + batch.frames()
        }
    }
}
