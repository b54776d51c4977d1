import DequeModule

/// The outcome of one non-blocking send attempt.
enum SendAttempt {
    case sent
    case wouldBlock
    case failed(ZMQError)
}

/// What waits in an outbox for one peer: messages, and their bytes (every frame's, frame 0 too).
package struct Backlog: Sendable, Equatable {
    /// Messages waiting.
    package var messages: Int
    /// Their bytes, all frames together.
    package var bytes: Int

    /// - Parameters:
    ///   - messages: Messages waiting.
    ///   - bytes: Their bytes.
    package init(messages: Int, bytes: Int) {
        self.messages = messages
        self.bytes = bytes
    }

    /// Nothing waits.
    package static let empty = Backlog(messages: 0, bytes: 0)
}

/// Messages a socket could not queue yet, retried in order. A ROUTER keeps one queue per peer
/// (frame 0); other sockets one queue under the empty key. Each queue counts its bytes, so a
/// caller can bound what one peer makes this process hold in bytes as well as in messages.
///
/// A client that keeps more replies in flight than ZeroMQ's queue for it holds sends most of
/// them through here, so this is a hot path: each queue keeps its messages' frames back to back
/// in one buffer (a copy of the bytes, no allocation per message or frame), a send to a peer
/// with a queue costs one lookup, and a queue that empties stays in the table (its buffer kept
/// while small) rather than the table being rebuilt.
///
/// ZeroMQ does not say when one peer of a ROUTER can take more (its `POLLOUT` means "some peer
/// can"), so a queue is retried on a schedule: every turn while it moves, and after an attempt
/// in which nothing left, only after a pause that doubles from ``RetryPause/first`` up to
/// ``RetryPause/longest`` until something leaves again. A peer that stopped reading thus costs
/// a few attempts a second, not one per loop turn.
struct Outbox {
    private let keyedByPeer: Bool
    /// Every peer that had to wait, its queue possibly empty now.
    private var queues: [[UInt8]: MessageQueue] = [:]
    /// Queues in the table that hold nothing: pruned when they outnumber the rest.
    private var emptyQueues = 0
    /// Messages waiting, all peers together.
    private(set) var count = 0
    /// The bytes of every message waiting, all peers together.
    private(set) var byteCount = 0

    init(keyedByPeer: Bool) {
        self.keyedByPeer = keyedByPeer
    }

    var isEmpty: Bool { count == 0 }

    /// Whether messages are already waiting where `frames` would go, so it must queue behind them.
    func isBlocked(for frames: [[UInt8]]) -> Bool {
        // Nearly always empty: no hashing of the peer's id on every send.
        count > 0 && queues[key(frames)]?.isEmpty == false
    }

    /// ``isBlocked(for:)`` for a message whose frame 0 is `peer`.
    func isBlocked(forPeer peer: [UInt8]) -> Bool {
        count > 0 && queues[keyedByPeer ? peer : []]?.isEmpty == false
    }

    func pending(peer: [UInt8]) -> Int {
        count == 0 ? 0 : queues[keyedByPeer ? peer : []]?.messages ?? 0
    }

    /// The messages and bytes waiting for `peer`.
    func backlog(peer: [UInt8]) -> Backlog {
        // Read in place: a copy of the queue out of the dictionary cost retains per message.
        guard count > 0, let index = queues.index(forKey: keyedByPeer ? peer : []) else { return .empty }
        return Backlog(messages: queues.values[index].messages, bytes: queues.values[index].bytes)
    }

    mutating func enqueue(_ frames: [[UInt8]]) {
        let size = frames.reduce(0) { $0 + $1.count }
        let index = queueIndex(for: key(frames))
        queues.values[index].append(frameCount: frames.count, size: size) { write in
            for frame in frames { frame.withUnsafeBytes(write) }
        }
        count += 1
        byteCount += size
    }

    /// Queues `peer`, `first`, `second`, `third` (a ROUTER's message from borrowed memory) when
    /// messages already wait for `peer`; `false` (and nothing kept) when none do, so the caller
    /// sends it now. One lookup of the peer, none while nothing waits for anyone.
    mutating func enqueueIfWaiting(peer: [UInt8], _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                                   _ third: UnsafeRawBufferPointer) -> Bool {
        guard count > 0, let index = queues.index(forKey: keyedByPeer ? peer : []), !queues.values[index].isEmpty else { return false }
        append(at: index, peer: peer, first, second, third)
        return true
    }

    /// Queues `peer`, `first`, `second`, `third` behind whatever waits for `peer` (a send that
    /// would have blocked).
    mutating func enqueue(peer: [UInt8], _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                          _ third: UnsafeRawBufferPointer) {
        append(at: queueIndex(for: keyedByPeer ? peer : []), peer: peer, first, second, third)
    }

    private mutating func append(at index: Dictionary<[UInt8], MessageQueue>.Index, peer: [UInt8],
                                 _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer) {
        let size = peer.count + first.count + second.count + third.count
        queues.values[index].append(frameCount: 4, size: size) { write in
            peer.withUnsafeBytes(write)
            write(first)
            write(second)
            write(third)
        }
        count += 1
        byteCount += size
    }

    /// The queue under `key`, made when missing; one that was empty is due at the next turn.
    private mutating func queueIndex(for key: [UInt8]) -> Dictionary<[UInt8], MessageQueue>.Index {
        let index: Dictionary<[UInt8], MessageQueue>.Index
        if let found = queues.index(forKey: key) {
            index = found
            guard queues.values[index].isEmpty else { return index }
            emptyQueues -= 1
        } else {
            queues[key] = MessageQueue()
            index = queues.index(forKey: key)!
        }
        queues.values[index].retryAt = nil
        queues.values[index].pause = .zero
        due = .nextTurn
        return index
    }

    mutating func drop(peer: [UInt8]) -> [[[UInt8]]] {
        guard let dropped = queues.removeValue(forKey: keyedByPeer ? peer : []) else { return [] }
        if dropped.isEmpty { emptyQueues -= 1 }
        count -= dropped.messages
        byteCount -= dropped.bytes
        if count == 0 { due = .never }
        return dropped.allMessages()
    }

    /// The pauses between attempts for a queue whose peer takes nothing.
    enum RetryPause {
        static let first = Duration.milliseconds(1)
        static let longest = Duration.milliseconds(64)
    }

    /// When the next retry is due.
    enum Due: Equatable {
        /// Nothing waits.
        case never
        /// A queue moved, or just started: at the next loop turn.
        case nextTurn
        /// Every queue waits out a pause; the earliest ends then.
        case at(ContinuousClock.Instant)
    }

    /// When ``retry(now:_:)`` has something to try.
    private(set) var due = Due.never

    /// Makes every queue (or only `peer`'s) due at the next retry, as when its peer is known to
    /// read again.
    mutating func retrySoon(peer: [UInt8]? = nil) {
        guard count > 0 else { return }
        var index = queues.values.startIndex
        while index != queues.values.endIndex {
            if peer == nil || queues.keys[index] == (keyedByPeer ? peer! : []) {
                queues.values[index].retryAt = nil
                queues.values[index].pause = .zero
            }
            queues.values.formIndex(after: &index)
        }
        due = .nextTurn
    }

    /// ``retrySoon(peer:)`` for one ROUTER peer by its routing id (frame 0), in one lookup: a
    /// message from it arrived, so it is likely reading again. Nothing for a peer nothing waits
    /// for, nor for a socket of another type.
    mutating func retrySoon(onePeer peer: [UInt8]) {
        guard keyedByPeer, count > 0, let index = queues.index(forKey: peer), !queues.values[index].isEmpty,
              queues.values[index].retryAt != nil else { return }
        queues.values[index].retryAt = nil
        queues.values[index].pause = .zero
        due = .nextTurn
    }

    /// Retries each queue that is due at `now` from its head until a send would block (see the
    /// schedule above); `attempt` gets each message's frames in the queue's memory, valid during
    /// the call. Messages that fail for another reason are removed and returned.
    mutating func retry(now: ContinuousClock.Instant,
                        _ attempt: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> SendAttempt) -> [([[UInt8]], ZMQError)] {
        var failures: [([[UInt8]], ZMQError)] = []
        var moved = false
        var earliest: ContinuousClock.Instant?
        // In place: a loop turn with a blocked peer (a client reading slower than it sends) makes
        // no copy of the keys and moves no queue out of the table and back.
        var index = queues.values.startIndex
        while index != queues.values.endIndex {
            defer { queues.values.formIndex(after: &index) }
            guard !queues.values[index].isEmpty else { continue }
            if let due = queues.values[index].retryAt, due > now {
                earliest = min(earliest ?? due, due)
                continue
            }
            let (left, failed) = queues.values[index].drain(attempt)
            failures += failed
            count -= left.messages
            byteCount -= left.bytes
            if queues.values[index].isEmpty {
                emptyQueues += 1
            } else if left.messages > 0 {
                // It moves: at the next turn again.
                queues.values[index].pause = .zero
                queues.values[index].retryAt = nil
                moved = true
            } else {
                let pause = queues.values[index].pause
                queues.values[index].pause = pause == .zero ? RetryPause.first : min(pause * 2, RetryPause.longest)
                let due = now.advanced(by: queues.values[index].pause)
                queues.values[index].retryAt = due
                earliest = min(earliest ?? due, due)
            }
        }
        // Peers that went away leave empty queues: let them go once they outnumber the rest.
        if emptyQueues > 64, emptyQueues > 2 * (queues.count - emptyQueues) {
            queues = queues.filter { !$0.value.isEmpty }
            emptyQueues = 0
        }
        due = count == 0 ? .never : moved ? .nextTurn : earliest.map(Due.at) ?? .nextTurn
        return failures
    }

    private func key(_ frames: [[UInt8]]) -> [UInt8] {
        keyedByPeer ? (frames.first ?? []) : []
    }
}
