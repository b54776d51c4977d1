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

    private var batches: [[UInt8]: BatchBuilder] = [:]
    /// Clients with a batch under way, in the order they got their first reply (for a stable
    /// order of ``finish()``).
    private var order: [[UInt8]] = []

    init() {}

    /// The bytes of the batch being built for `peer`: they wait for it as surely as its outbox
    /// does (the backlog a large reply is judged against).
    func building(for peer: [UInt8]) -> Int { batches[peer]?.byteCount ?? 0 }

    /// Adds one reply for `peer`.
    /// - Parameter batching: Whether the client sent a batch (then its replies are batched).
    /// - Returns: A message to send now: the reply itself for a client that does not batch, or
    ///   a batch that reached its preferred size; `nil` while the batch grows.
    mutating func add(to peer: [UInt8], batching: Bool, _ kind: MessageKind, flags: Header.Flags, correlation: UInt64,
                      address: [UInt8], payload: [UInt8]) -> Message? {
        guard batching else { return [peer, Header(kind, flags: flags, correlation: correlation).bytes, address, payload] }
        // Taken out and put back: the builder is appended to in place, never copied.
        var batch: BatchBuilder
        if let building = batches.removeValue(forKey: peer) {
            batch = building
        } else {
            order.append(peer)
            batch = BatchBuilder()
        }
        batch.append(kind: kind, flags: flags, correlation: correlation, address: address, payload: payload)
        guard batch.byteCount >= BatchBuilder.preferredByteCount else {
            batches[peer] = batch
            return nil
        }
        // The next reply starts a batch of its own, behind this one.
        batches[peer] = BatchBuilder(reservingCapacity: batch.byteCount)
        return [peer] + batch.frames()
    }

    /// The batches still under way, one message per client (a batch of one as a plain message).
    mutating func finish() -> [Message] {
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
