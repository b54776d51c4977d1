import GroveCluster
import GroveWire

/// What one worker may have unanswered: `queues.workerOutbox` requests, and
/// `queues.workerOutboxBytes` bytes of requests with the replies they are expected to bring back.
/// The first bounds what waits on the way to the worker and in it; the second what waits there
/// and on the way back, in bytes, however large the states a `get` returns. A reply's size is
/// known only once it comes, so each is expected to be as large as the largest of the worker's
/// recent replies (decaying by 1/64 per reply): an estimate, which a sudden large reply exceeds
/// once.
///
/// A client whose replies wait unread (one that sends faster than it reads, or not at all) gets
/// half of each: whatever it sends, the other half stays for everyone else's requests.
extension CoordinatorCore {
    /// Why worker number `worker` cannot take a request of `bytes` bytes now, if it cannot: a
    /// `busy` naming the limit it reached. A worker with nothing in flight takes any request.
    /// - Parameter readsSlowly: Whether the request's client has replies waiting unread: it
    ///   may fill only half of the worker's queue.
    func workerBusy(_ worker: Int, adding bytes: Int, address: String?, readsSlowly: Bool = false) -> WireError? {
        RequestBound.busy(unanswered: inFlight[worker], heldBytes: inFlightBytes[worker], adding: bytes,
                          expectedReplyBytes: expectedReplyBytes[worker], workerOutbox: topology.queues.workerOutbox,
                          workerOutboxBytes: topology.queues.workerOutboxBytes, holder: .coordinator(forWorker: workerNames[worker]),
                          address: address, readsSlowly: readsSlowly)
    }

    /// Counts a reply of `size` bytes (address and payload) from worker number `worker` into the
    /// size its replies are expected to have.
    mutating func noteReply(from worker: Int, size: Int) {
        let expected = expectedReplyBytes[worker]
        expectedReplyBytes[worker] = size >= expected ? size : expected - (expected - size + 63) / 64
    }
}
